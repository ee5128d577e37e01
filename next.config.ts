import type { NextConfig } from "next";

const config: NextConfig = {
  reactStrictMode: true,
  // Parallel checkouts/agents can build side by side without clobbering each other.
  distDir: process.env.RLBOARD_DIST_DIR ?? ".next",
  poweredByHeader: false,
  // gzip answers unless the CLI that started the server said "off" (a loopback address,
  // where a proxy compresses for remote users: cli/server-process.ts resolveCompress,
  // docs/deploy.md "Compression"). Read when the server starts, not at build time.
  compress: process.env.RLBOARD_COMPRESS !== "off",
  // better-sqlite3 is a native addon: keep it out of the bundle (it is on Next's default
  // list already; stated here because the server cannot start without it).
  serverExternalPackages: ["better-sqlite3"],
  typedRoutes: false,
  // `npm run typecheck` (tsc, zero errors) is a separate required step of `npm test`;
  // skipping Next's second type-check pass halves build time on small CI machines.
  typescript: { ignoreBuildErrors: true },
};

export default config;
