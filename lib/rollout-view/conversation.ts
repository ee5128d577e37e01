/**
 * Sidecar messages → conversation cards (docs/views.md 6.2). Assistant output recorded
 * verbatim (a string with `<think>` / `<tool_call>` markup, no structured fields) is
 * parsed for display; anything we do not recognise stays visible as text.
 */

export type ConvBlock =
  | { kind: "thinking"; text: string }
  | { kind: "text"; text: string }
  | { kind: "json"; text: string }
  | { kind: "tool_call"; name: string; args: string; json: boolean };

export interface ConvCard {
  index: number;
  role: string;
  name: string | null;
  /** Bodies of system and tool messages start collapsed. */
  collapsed: boolean;
  blocks: ConvBlock[];
  /** 1-based turn for assistant messages the policy generated in this sample, else null. */
  turn: number | null;
  /** Characters of visible text, for the header (a cheap size hint). */
  chars: number;
}

export interface RawMarkup {
  thinking: string | null;
  toolCalls: string[];
  rest: string;
}

const THINK_RE = /<think>([\s\S]*?)<\/think>/g;
const TOOL_RE = /<tool_call>([\s\S]*?)<\/tool_call>/g;
const TRAILING_SPECIALS_RE = /(?:\s*<\|[^|<>]*\|>)+\s*$/;

/**
 * Split verbatim engine output into thinking, tool-call bodies and the remaining text.
 * Also handles the two common partial forms: a `</think>` whose opening tag was part of
 * the prompt template, and a `<think>` left open by a truncated sample.
 */
export function parseRawMarkup(content: string): RawMarkup {
  const thinks: string[] = [];
  let s = content;
  const closeOnly = s.indexOf("</think>");
  const firstOpen = s.indexOf("<think>");
  if (closeOnly >= 0 && (firstOpen < 0 || firstOpen > closeOnly)) {
    thinks.push(s.slice(0, closeOnly).trim());
    s = s.slice(closeOnly + "</think>".length);
  }
  s = s.replace(THINK_RE, (_m, body: string) => {
    thinks.push(body.trim());
    return "";
  });
  const open = s.indexOf("<think>");
  if (open >= 0) {
    thinks.push(s.slice(open + "<think>".length).trim());
    s = s.slice(0, open);
  }
  const toolCalls: string[] = [];
  s = s.replace(TOOL_RE, (_m, body: string) => {
    toolCalls.push(body.trim());
    return "";
  });
  s = s.replace(TRAILING_SPECIALS_RE, "").trim();
  const thinking = thinks.filter(Boolean).join("\n\n");
  return { thinking: thinking || null, toolCalls, rest: s };
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function prettyArgs(args: unknown): { text: string; json: boolean } {
  if (typeof args === "string") {
    try {
      return { text: JSON.stringify(JSON.parse(args), null, 2), json: true };
    } catch {
      return { text: args, json: false };
    }
  }
  if (args === undefined || args === null) return { text: "", json: false };
  return { text: JSON.stringify(args, null, 2), json: true };
}

function rawToolCall(body: string): ConvBlock {
  try {
    const obj = JSON.parse(body) as unknown;
    const name = isObj(obj) && typeof obj.name === "string" ? obj.name : "tool_call";
    const args = isObj(obj) && "arguments" in obj ? obj.arguments : obj;
    return { kind: "tool_call", name, ...argsBlock(args) };
  } catch {
    return { kind: "tool_call", name: "tool_call", args: body, json: false };
  }
}

function argsBlock(args: unknown): { args: string; json: boolean } {
  const p = prettyArgs(args);
  return { args: p.text, json: p.json };
}

function structuredToolCall(call: unknown): ConvBlock {
  const fn = isObj(call) && isObj(call.function) ? call.function : call;
  const name = isObj(fn) && typeof fn.name === "string" ? fn.name : "tool";
  const args = isObj(fn) ? fn.arguments : undefined;
  return { kind: "tool_call", name, ...argsBlock(args ?? "") };
}

function blocksOf(msg: Record<string, unknown>): ConvBlock[] {
  const blocks: ConvBlock[] = [];
  const role = typeof msg.role === "string" ? msg.role : "";
  const content = msg.content;
  const structuredCalls = Array.isArray(msg.tool_calls) ? msg.tool_calls : [];
  const reasoning = typeof msg.reasoning_content === "string" ? msg.reasoning_content : null;
  let text: string | null = typeof content === "string" ? content : null;
  let rawCalls: string[] = [];
  if (role === "assistant" && typeof content === "string" && reasoning === null && structuredCalls.length === 0) {
    const parsed = parseRawMarkup(content);
    if (parsed.thinking) blocks.push({ kind: "thinking", text: parsed.thinking });
    rawCalls = parsed.toolCalls;
    text = parsed.rest;
  }
  if (reasoning !== null && reasoning.trim()) blocks.push({ kind: "thinking", text: reasoning.trim() });
  if (text !== null) {
    if (text.trim()) blocks.push({ kind: "text", text });
  } else if (content !== undefined && content !== null) {
    blocks.push({ kind: "json", text: JSON.stringify(content, null, 2) });
  }
  for (const body of rawCalls) blocks.push(rawToolCall(body));
  for (const call of structuredCalls) blocks.push(structuredToolCall(call));
  return blocks;
}

function sameMessage(a: unknown, b: unknown): boolean {
  return isObj(a) && isObj(b) && a.role === b.role && JSON.stringify(a.content) === JSON.stringify(b.content);
}

/**
 * How many leading messages are the prompt. When the sidecar's `prompt` is a message list
 * that the conversation starts with and an assistant message follows it, that list
 * (few-shot assistant turns included); otherwise everything before the first assistant
 * message. A prompt list that runs to the last assistant message is "the chat so far"
 * (docs/formats.md: `prompt` may be the chat with tool results included), not a prompt
 * with nothing generated after it.
 */
export function promptMessageCount(messages: readonly unknown[], prompt: unknown): number {
  if (
    Array.isArray(prompt) &&
    prompt.length &&
    prompt.length <= messages.length &&
    prompt.every((p, i) => sameMessage(p, messages[i])) &&
    messages.slice(prompt.length).some((m) => isObj(m) && m.role === "assistant")
  ) {
    return prompt.length;
  }
  const first = messages.findIndex((m) => isObj(m) && m.role === "assistant");
  return first < 0 ? messages.length : first;
}

export function prepareConversation(messages: readonly unknown[], prompt?: unknown): ConvCard[] {
  const promptCount = promptMessageCount(messages, prompt);
  let turn = 0;
  return messages.map((m, index): ConvCard => {
    const msg = isObj(m) ? m : { role: "unknown", content: m };
    const role = typeof msg.role === "string" ? msg.role : "unknown";
    const blocks = blocksOf(msg);
    const generated = role === "assistant" && index >= promptCount;
    if (generated) turn++;
    let chars = 0;
    for (const b of blocks) chars += b.kind === "tool_call" ? b.args.length : b.text.length;
    return {
      index,
      role,
      name: typeof msg.name === "string" && msg.name ? msg.name : null,
      collapsed: role === "system" || role === "tool",
      blocks,
      turn: generated ? turn : null,
      chars,
    };
  });
}

/** Snippets (the start of each thinking / text block) used to find a generated turn in the decoded response. */
export function cardProbes(card: ConvCard): string[] {
  const out: string[] = [];
  for (const b of card.blocks) {
    if (b.kind === "text" || b.kind === "thinking") {
      const t = b.text.replace(/\s+/g, " ").trim();
      if (t.length >= 4) out.push(t.slice(0, 32));
    }
  }
  return out;
}
