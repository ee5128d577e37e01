/**
 * Run ids: a run's path relative to its runs root, URL-safe. Path separators become "~";
 * each segment is percent-encoded (with "~" itself encoded) so the mapping is reversible
 * and ids sit in URL path segments and query strings without further escaping.
 * Decoding rejects anything that could leave the root ("..", ".", empty or absolute parts).
 */
export function encodeRunId(relPath: string): string {
  return relPath
    .split("/")
    .map((seg) => encodeURIComponent(seg).replace(/~/g, "%7E"))
    .join("~");
}

export function decodeRunId(id: string): string | null {
  if (!id || id.length > 1024) return null;
  const segs: string[] = [];
  for (const part of id.split("~")) {
    let seg: string;
    try {
      seg = decodeURIComponent(part);
    } catch {
      return null;
    }
    if (!seg || seg === "." || seg === ".." || seg.includes("/") || seg.includes("\\") || seg.includes("\0")) return null;
    segs.push(seg);
  }
  return segs.join("/");
}
