import { describe, expect, it } from "vitest";
import { parseRawMarkup, prepareConversation, promptMessageCount } from "./conversation";
import { messages0 } from "./testing/golden";

describe("prepareConversation on a recorded sidecar", () => {
  const cards = prepareConversation(messages0.messages, messages0.prompt);
  it("tags roles, collapses system and tool bodies, numbers the generated turns", () => {
    expect(cards.map((c) => c.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(cards.map((c) => c.collapsed)).toEqual([true, false, false, true, false]);
    expect(cards.map((c) => c.turn)).toEqual([null, null, 1, null, 2]);
    expect(cards[3]!.name).toBe("lookup");
  });
  it("turns reasoning into a thinking block and structured calls into chips with pretty JSON", () => {
    const a = cards[2]!;
    expect(a.blocks.map((b) => b.kind)).toEqual(["thinking", "text", "tool_call"]);
    expect(a.blocks[2]).toEqual({ kind: "tool_call", name: "lookup", args: '{\n  "query": "answer"\n}', json: true });
  });
});

describe("parseRawMarkup", () => {
  it("extracts think blocks and tool calls and strips trailing special tokens", () => {
    const r = parseRawMarkup('<think> plan A </think>Sure.<think>plan B</think>\n<tool_call>\n{"name":"f","arguments":{"x":1}}\n</tool_call><|im_end|> <|endoftext|>');
    expect(r.thinking).toBe("plan A\n\nplan B");
    expect(r.toolCalls).toEqual(['{"name":"f","arguments":{"x":1}}']);
    expect(r.rest).toBe("Sure.");
  });
  it("handles a close tag whose opening was in the template, and a think left open by truncation", () => {
    expect(parseRawMarkup("reasoning here</think>answer")).toEqual({ thinking: "reasoning here", toolCalls: [], rest: "answer" });
    expect(parseRawMarkup("ok <think>cut off mid")).toEqual({ thinking: "cut off mid", toolCalls: [], rest: "ok" });
  });
  it("leaves unknown markup visible", () => {
    expect(parseRawMarkup("<answer>4</answer><|im_end|>").rest).toBe("<answer>4</answer>");
  });
});

describe("verbatim assistant output", () => {
  it("becomes thinking, text and tool-call chips; an unparseable call is shown raw", () => {
    const [card] = prepareConversation([
      { role: "assistant", content: '<think>t</think>Hi<tool_call>{"name":"search","arguments":"{\\"q\\": 1}"}</tool_call><tool_call>not json</tool_call><|im_end|>' },
    ]);
    expect(card!.blocks).toEqual([
      { kind: "thinking", text: "t" },
      { kind: "text", text: "Hi" },
      { kind: "tool_call", name: "search", args: '{\n  "q": 1\n}', json: true },
      { kind: "tool_call", name: "tool_call", args: "not json", json: false },
    ]);
  });
  it("does not parse markup when the message has structured fields", () => {
    const [card] = prepareConversation([{ role: "assistant", content: "<think>x</think>", reasoning_content: "r" }]);
    expect(card!.blocks).toEqual([
      { kind: "thinking", text: "r" },
      { kind: "text", text: "<think>x</think>" },
    ]);
  });
  it("pretty-prints non-string content", () => {
    const [card] = prepareConversation([{ role: "user", content: [{ type: "text", text: "hi" }] }]);
    expect(card!.blocks[0]!.kind).toBe("json");
  });
});

describe("promptMessageCount", () => {
  it("uses the prompt list when the conversation starts with it (few-shot turns stay prompt)", () => {
    const prompt = [
      { role: "user", content: "q" },
      { role: "assistant", content: "example" },
    ];
    expect(promptMessageCount([...prompt, { role: "assistant", content: "gen" }], prompt)).toBe(2);
    expect(promptMessageCount([{ role: "system", content: "s" }, { role: "user", content: "q" }, { role: "assistant", content: "a" }], "q")).toBe(2);
  });

  it("a prompt that is the whole chat (the chat so far, tool results included) is not all prompt", () => {
    // #15 defect 4: the sidecar's prompt list repeated every message, so no turn was generated
    // and the per-turn metrics never split. The generated turns start at the first assistant.
    const chat = [
      { role: "system", content: "s" },
      { role: "user", content: "q" },
      { role: "assistant", content: "call" },
      { role: "tool", content: "r" },
      { role: "assistant", content: "answer" },
    ];
    expect(promptMessageCount(chat, chat)).toBe(2);
    expect(prepareConversation(chat, chat).map((c) => c.turn)).toEqual([null, null, 1, null, 2]);
  });
});
