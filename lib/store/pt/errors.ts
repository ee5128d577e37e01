/**
 * Error raised for any malformed, truncated or unsupported `.pt` content (zip layer,
 * pickle layer, tensor layout). The message always names the file, so a caller can
 * map "a fresh file fails to parse" to HTTP 503 still_writing (docs/api.md 1.9).
 * I/O errors from the OS (ENOENT, EACCES, …) are never wrapped.
 */
export class PtFormatError extends Error {
  readonly path: string;
  readonly detail: string;

  constructor(path: string, detail: string, options?: { cause?: unknown }) {
    super(`invalid .pt file ${path}: ${detail}`, options);
    this.name = "PtFormatError";
    this.path = path;
    this.detail = detail;
  }
}

/**
 * A name read from the file (zip entry, storage key) fit for an error message: printable
 * path-like names pass, anything else is replaced, so messages never echo arbitrary bytes.
 */
export function nameLabel(name: string): string {
  return /^[\w./<>-]{1,160}$/.test(name) ? name : "<unprintable name>";
}
