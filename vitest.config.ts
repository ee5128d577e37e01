import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// The filename picks the environment: lib/app/collector/cli tests run in
// node, component tests in jsdom.
const root = fileURLToPath(new URL(".", import.meta.url));
const alias = { "@": root, "server-only": `${root}lib/testing/server-only-stub.ts` };

export default defineConfig({
  test: {
    projects: [
      {
        resolve: { alias },
        test: {
          name: "node",
          environment: "node",
          include: ["lib/**/*.test.ts", "app/**/*.test.ts", "collector/**/*.test.ts", "cli/**/*.test.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
          // next-auth imports "next/server" without an extension, which Node's own ESM
          // resolver refuses; bundled by Vite, the route handlers load in tests.
          server: { deps: { inline: ["next-auth"] } },
        },
      },
      {
        resolve: { alias },
        test: {
          name: "jsdom",
          environment: "jsdom",
          include: ["components/**/*.test.tsx", "components/**/*.test.ts"],
        },
      },
    ],
  },
});
