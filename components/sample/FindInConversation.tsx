"use client";
/**
 * Ctrl-F style find inside the Sample view's conversation (docs/views.md 6.2): matches are
 * painted with the CSS Custom Highlight API (no DOM changes under React's feet), the
 * current one is scrolled into view; Enter / Shift+Enter (or the arrows) step through
 * them, Escape clears. Searching expands every card first so collapsed turns are
 * searched too. The query may arrive from the URL (`find=`, set by the Rollouts search).
 */
import { useEffect, useMemo, useRef, useState } from "react";
import "@/components/rollout/drift/drift.css";

type HighlightCtor = new (...ranges: Range[]) => object;
interface HighlightRegistry {
  set(name: string, h: object): void;
  delete(name: string): void;
}

function registry(): { reg: HighlightRegistry; Highlight: HighlightCtor } | null {
  const css = (globalThis as { CSS?: { highlights?: HighlightRegistry } }).CSS;
  const Highlight = (globalThis as { Highlight?: HighlightCtor }).Highlight;
  return css?.highlights && Highlight ? { reg: css.highlights, Highlight } : null;
}

/** Every case-insensitive occurrence of `q` in the text nodes under `root`, as Ranges. */
export function findRanges(root: Node, q: string): Range[] {
  if (!q) return [];
  const needle = q.toLowerCase();
  const out: Range[] = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = (n.nodeValue ?? "").toLowerCase();
    let i = text.indexOf(needle);
    while (i >= 0) {
      const r = document.createRange();
      r.setStart(n, i);
      r.setEnd(n, i + needle.length);
      out.push(r);
      i = text.indexOf(needle, i + needle.length);
    }
  }
  return out;
}

export function FindInConversation({ onExpandAll }: { onExpandAll: () => void }) {
  // `find=` is read from the address bar after mount (works without a router context too).
  const [q, setQ] = useState("");
  useEffect(() => {
    const f = new URLSearchParams(window.location.search).get("find");
    // eslint-disable-next-line react-hooks/set-state-in-effect -- one-time pickup of the URL after hydration
    if (f) setQ(f);
  }, []);
  const [cur, setCur] = useState(0);
  const [count, setCount] = useState(0);
  const box = useRef<HTMLDivElement>(null);
  const ranges = useRef<Range[]>([]);
  const expanded = useRef(false);
  const hl = useMemo(() => registry(), []);
  const expandRef = useRef(onExpandAll);
  useEffect(() => {
    expandRef.current = onExpandAll;
  }, [onExpandAll]);

  useEffect(() => {
    if (q && !expanded.current) {
      expanded.current = true;
      expandRef.current();
    }
    // Wait a frame so the expanded cards are in the DOM.
    const id = requestAnimationFrame(() => {
      const root = box.current?.closest("section")?.querySelector(".sv-cards");
      ranges.current = root ? findRanges(root, q) : [];
      setCount(ranges.current.length);
      setCur(0);
    });
    return () => cancelAnimationFrame(id);
  }, [q]);

  useEffect(() => {
    if (!hl) return;
    const rs = ranges.current;
    if (rs.length === 0) {
      hl.reg.delete("fc-hit");
      hl.reg.delete("fc-cur");
      return;
    }
    const c = rs[Math.min(cur, rs.length - 1)] as Range;
    hl.reg.set("fc-hit", new hl.Highlight(...rs.filter((r) => r !== c)));
    hl.reg.set("fc-cur", new hl.Highlight(c));
    c.startContainer.parentElement?.scrollIntoView({ block: "center" });
    return () => {
      hl.reg.delete("fc-hit");
      hl.reg.delete("fc-cur");
    };
  }, [cur, count, hl]);

  const step = (d: number) => setCur((c) => (count ? (c + d + count) % count : 0));
  return (
    <div className="fc-box" ref={box} role="search" aria-label="Find in conversation">
      <input
        type="search"
        aria-label="Find in conversation"
        placeholder="find in conversation"
        value={q}
        onChange={(e) => setQ(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            step(e.shiftKey ? -1 : 1);
          } else if (e.key === "Escape") setQ("");
        }}
      />
      <span className="muted" data-testid="find-count">
        {q ? (count ? `${Math.min(cur, count - 1) + 1} / ${count}` : "no matches") : ""}
      </span>
      <button type="button" className="rv-btn" aria-label="Previous match" disabled={!count} onClick={() => step(-1)}>
        ↑
      </button>
      <button type="button" className="rv-btn" aria-label="Next match" disabled={!count} onClick={() => step(1)}>
        ↓
      </button>
    </div>
  );
}
