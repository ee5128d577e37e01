/**
 * A small OpenID Connect issuer for tests: a real HTTP server on 127.0.0.1 with discovery,
 * /authorize (records the query, redirects back with code + state), /token (records the
 * form body, checks the PKCE verifier and the redirect_uri against the authorize step,
 * answers an RS256 id_token signed with a key made here), /jwks and /userinfo. Everything
 * it received is kept in `authorizeRequests` / `tokenRequests` for assertions.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeOidcUser {
  sub: string;
  name: string;
  email?: string;
}

export interface FakeOidc {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The query of every /authorize request. */
  authorizeRequests: URLSearchParams[];
  /** The form body (and Authorization header) of every /token request. */
  tokenRequests: { body: URLSearchParams; authorization: string | null; status: number; error?: string }[];
  /** Who signs in next. */
  user: FakeOidcUser;
  close(): Promise<void>;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString("base64url");
}

function signJwt(payload: Record<string, unknown>, key: KeyObject, kid: string): string {
  const head = b64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid }));
  const body = b64url(JSON.stringify(payload));
  const sig = sign("sha256", Buffer.from(`${head}.${body}`), key);
  return `${head}.${body}.${b64url(sig)}`;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export async function startFakeOidc(opts: { clientId?: string; clientSecret?: string; user?: FakeOidcUser } = {}): Promise<FakeOidc> {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = randomBytes(6).toString("hex");
  const codes = new Map<string, { query: URLSearchParams; user: FakeOidcUser }>();
  const accessTokens = new Map<string, FakeOidcUser>();
  const state: FakeOidc = {
    issuer: "",
    clientId: opts.clientId ?? "rlboard-test",
    clientSecret: opts.clientSecret ?? randomBytes(12).toString("hex"),
    authorizeRequests: [],
    tokenRequests: [],
    user: opts.user ?? { sub: "u-1001", name: "Ada Lovelace", email: "ada@lab.test" },
    close: async () => {},
  };

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify(body));
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", state.issuer);
      if (url.pathname === "/.well-known/openid-configuration") {
        return json(res, 200, {
          issuer: state.issuer,
          authorization_endpoint: `${state.issuer}/authorize`,
          token_endpoint: `${state.issuer}/token`,
          userinfo_endpoint: `${state.issuer}/userinfo`,
          jwks_uri: `${state.issuer}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
        });
      }
      if (url.pathname === "/jwks") {
        return json(res, 200, { keys: [{ ...publicKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" }] });
      }
      if (url.pathname === "/authorize") {
        const q = url.searchParams;
        state.authorizeRequests.push(new URLSearchParams(q));
        const redirectUri = q.get("redirect_uri");
        if (q.get("client_id") !== state.clientId || !redirectUri) return json(res, 400, { error: "invalid_request" });
        const code = randomBytes(16).toString("base64url");
        codes.set(code, { query: new URLSearchParams(q), user: { ...state.user } });
        const back = new URL(redirectUri);
        back.searchParams.set("code", code);
        const st = q.get("state");
        if (st) back.searchParams.set("state", st);
        back.searchParams.set("iss", state.issuer);
        res.writeHead(302, { location: back.toString() });
        return res.end();
      }
      if (url.pathname === "/token" && req.method === "POST") {
        const body = new URLSearchParams(await readBody(req));
        const authorization = req.headers.authorization ?? null;
        const record: FakeOidc["tokenRequests"][number] = { body, authorization, status: 200 };
        state.tokenRequests.push(record);
        const fail = (error: string) => {
          record.status = 400;
          record.error = error;
          json(res, 400, { error });
        };
        const basic = authorization?.startsWith("Basic ") ? Buffer.from(authorization.slice(6), "base64").toString() : null;
        const [id, secret] = basic ? basic.split(":").map(decodeURIComponent) : [body.get("client_id"), body.get("client_secret")];
        if (id !== state.clientId || secret !== state.clientSecret) return fail("invalid_client");
        const grant = codes.get(body.get("code") ?? "");
        if (!grant) return fail("invalid_grant");
        codes.delete(body.get("code")!);
        // RFC 6749 4.1.3: the redirect_uri must be identical to the authorize step's.
        if (body.get("redirect_uri") !== grant.query.get("redirect_uri")) return fail("invalid_grant");
        const challenge = grant.query.get("code_challenge");
        if (challenge) {
          const verifier = body.get("code_verifier") ?? "";
          if (createHash("sha256").update(verifier).digest("base64url") !== challenge) return fail("invalid_grant");
        }
        const now = Math.floor(Date.now() / 1000);
        const claims: Record<string, unknown> = {
          iss: state.issuer,
          sub: grant.user.sub,
          aud: state.clientId,
          iat: now,
          exp: now + 300,
          name: grant.user.name,
          ...(grant.user.email ? { email: grant.user.email } : {}),
        };
        const nonce = grant.query.get("nonce");
        if (nonce) claims.nonce = nonce;
        const accessToken = randomBytes(16).toString("base64url");
        accessTokens.set(accessToken, grant.user);
        return json(res, 200, {
          access_token: accessToken,
          token_type: "Bearer",
          expires_in: 300,
          id_token: signJwt(claims, privateKey, kid),
        });
      }
      if (url.pathname === "/userinfo") {
        const user = accessTokens.get((req.headers.authorization ?? "").replace(/^Bearer /i, ""));
        if (!user) return json(res, 401, { error: "invalid_token" });
        return json(res, 200, { sub: user.sub, name: user.name, email: user.email });
      }
      json(res, 404, { error: "not_found" });
    })().catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(err) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
