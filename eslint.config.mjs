// Layer rules (docs/architecture.md, "Folders own layers") are encoded here as no-restricted-imports blocks, each with its reason.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";

const serverOnly = [
  { group: ["@/lib/server/*", "@/lib/server/**"], message: "lib/server is server-only: it must never reach a client bundle." },
  { group: ["@/lib/store/*", "@/lib/store/**"], message: "lib/store touches run directories; client code fetches through lib/client/queries." },
  { group: ["@/lib/env"], message: "Server env is read by the server only (lib/env.ts validates it once)." },
  { group: ["better-sqlite3", "node:*"], message: "Node-only modules cannot run in the browser." },
];

// lib data layers (store, contracts, timeline, rollout, advisory, health, compare).
const dataLayerPatterns = [
  { group: ["next", "next/*", "react", "react-dom", "@/components/*", "@/app/*"], message: "lib data layers import nothing from Next or the UI." },
  { group: ["@/lib/server/*", "@/lib/client/*"], message: "lib data layers are used by server and collector alike; keep them below lib/server.", allowTypeImports: true },
];
const noHttpInDataLayers = {
  group: ["@/lib/api", "@/lib/api/*", "@/lib/api/**"],
  message: "lib data layers do not know HTTP: throw ApiError from @/lib/contracts/errors (lib/api maps it to a response).",
};

// zod stays out of the browser bundle (it is ~30 KB gzipped): client code imports only the
// zod-free contract modules as values; the rest (schemas) as types.
const noZodInClient = [
  { group: ["zod"], message: "zod stays on the server: validate in the route, type the answer with `import type`.", allowTypeImports: true },
  {
    group: ["@/lib/contracts/*", "!@/lib/contracts/limits", "!@/lib/contracts/lanes", "!@/lib/contracts/errors", "!@/lib/contracts/binary", "!@/lib/contracts/metrics-frame", "!@/lib/contracts/run-inputs", "!@/lib/contracts/timeline-view"],
    message: "This contract module defines zod schemas: import its types with `import type`, or move the constant the browser needs into a zod-free module (limits, lanes, errors, binary, metrics-frame, run-inputs, timeline-view).",
    allowTypeImports: true,
  },
];

const noViewportPrefetch = [
  {
    name: "next/link",
    importNames: ["default"],
    message: "Use { Link } from @/components/shell/Link: it prefetches on hover, not for every link in sight (which queues page renders ahead of the view's data).",
  },
];

export default tseslint.config(
  { ignores: [".next/**", ".next-*/**", "tmp/**", "collector/dist/**", "node_modules/**", "data/**", "test-results/**", "playwright-report/**", "next-env.d.ts", "collector/clients/python/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    plugins: { "react-hooks": reactHooks },
    rules: {
      // The plugin's recommended set (rules of hooks, refs, purity, set-state-in-effect…),
      // with missing effect dependencies an error rather than a warning.
      ...reactHooks.configs["recommended-latest"].rules,
      "react-hooks/exhaustive-deps": "error",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      // `import { type X } from "m"` still loads m under verbatimModuleSyntax (it kept zod in the browser bundle)
      "@typescript-eslint/no-import-type-side-effects": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { attributes: false } }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Client code: components and lib/client must not import server-side layers.
    files: ["components/**/*.{ts,tsx}", "lib/client/**/*.ts", "lib/charts/**/*.ts"],
    // tests run in Node (they may start servers and parse with the schemas)
    ignores: ["**/*.test.ts", "**/*.test.tsx"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          // Server actions (lib/actions, "use server") are the sanctioned way in from the client.
          patterns: [...serverOnly, ...noZodInClient],
          paths: noViewportPrefetch,
        },
      ],
    },
  },
  {
    files: ["app/**/*.{ts,tsx}"],
    rules: { "no-restricted-imports": ["error", { paths: noViewportPrefetch }] },
  },
  {
    // Pages and layouts reach run data only through lib/server/runs/page-run.ts, which checks
    // the session first: a layout renders beside its page, so each must authenticate itself.
    files: ["app/**/page.tsx", "app/**/layout.tsx"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: noViewportPrefetch,
          patterns: [
            {
              group: ["@/lib/server/runs/context", "@/lib/server/runs/registry", "@/lib/server/runs/list-runs", "@/lib/server/runs/run-args", "@/lib/store/*", "@/lib/store/**"],
              message: "Pages read runs through @/lib/server/runs/page-run (getPageRunContext, getPageRuns): it verifies the session before any run data is read.",
            },
          ],
        },
      ],
    },
  },
  {
    // The one place that wraps next/link.
    files: ["components/shell/Link.tsx"],
    rules: { "no-restricted-imports": ["error", { patterns: serverOnly }] },
  },
  {
    // The collector is a standalone daemon: only lib/store and lib/contracts (plus its own code).
    files: ["collector/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["next", "next/*", "react", "react-dom"], message: "The collector never runs inside Next." },
            { group: ["@/app/*", "@/components/*", "@/lib/server/*", "@/lib/api/*", "@/lib/client/*"], message: "collector/ imports only lib/store and lib/contracts." },
          ],
        },
      ],
    },
  },
  {
    // Data access and contracts stay framework-free so the collector, CLI and tests can use them.
    // They throw ApiError from lib/contracts/errors; only lib/api maps errors to HTTP.
    files: [
      "lib/store/**/*.ts",
      "lib/contracts/**/*.ts",
      "lib/timeline/**/*.ts",
      "lib/rollout/**/*.ts",
      "lib/advisory/**/*.ts",
      "lib/health/**/*.ts",
      "lib/compare/**/*.ts",
    ],
    ignores: ["**/*.test.ts", "lib/health/server.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [...dataLayerPatterns, noHttpInDataLayers] }] },
  },
  {
    // Endpoint layers read telemetry through the store's public surface (lib/store/telemetry
    // index: block types, scan primitives), never its chunk geometry or internals.
    files: ["lib/{timeline,advisory,health,compare,rollout}/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            ...dataLayerPatterns,
            noHttpInDataLayers,
            { group: ["@/lib/store/telemetry/*"], message: "Import from @/lib/store/telemetry (its index): scan primitives such as forEachTickRun keep chunk geometry inside the store." },
          ],
        },
      ],
    },
  },
  {
    // The health layer's one server-side binding (RunContext + server env); still no HTTP.
    files: ["lib/health/server.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [dataLayerPatterns[0], noHttpInDataLayers] }] },
  },
  {
    // Their tests may check what an answer serialises to (lib/api/json, toErrorResponse).
    files: ["lib/{store,contracts,timeline,rollout,advisory,health,compare}/**/*.test.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: dataLayerPatterns }] },
  },
);
