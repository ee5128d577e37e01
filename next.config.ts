import type { NextConfig } from "next";

const config: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // better-sqlite3 is a native addon: keep it out of the bundle (it is on Next's default
  // list already; stated here because the server cannot start without it).
  serverExternalPackages: ["better-sqlite3"],
  typedRoutes: false,
};

export default config;
