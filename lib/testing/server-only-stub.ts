// Vitest runs route handlers and server modules directly in node; the real `server-only`
// package throws outside a React Server Components bundle, so tests alias it to this no-op.
export {};
