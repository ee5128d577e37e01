/**
 * Synthetic agentic conversations for the demo dumps: a system prompt with tools, a user
 * task, 1–4 assistant turns with reasoning and tool calls (JSON arguments), tool results,
 * and a final answer that is right or wrong. Some turns keep the raw `<think>` /
 * `<tool_call>` markup in `content` (as when the reasoning/tool parser did not run), and
 * one conversation can be a runaway reasoning loop that hits the response cap.
 *
 * Every letter run the generator can emit comes from the tables below, so the demo
 * tokenizer (tokenizer.ts) is built from `corpusWords()` and decodes every id to text.
 */
import type { Rng } from "./prng";

export interface ToolCall {
  name: string;
  /** JSON text, as OpenAI-style messages carry it. */
  arguments: string;
}

export interface Turn {
  reasoning: string;
  content: string;
  toolCalls: ToolCall[];
  toolResults: { name: string; content: string }[];
  /** Markup left in `content` instead of parsed `reasoning_content` / `tool_calls`. */
  raw: boolean;
}

export interface Conversation {
  family: string;
  system: string;
  user: string;
  turns: Turn[];
  correct: boolean;
  /** The last turn never closed its reasoning (runaway sample). */
  runaway: boolean;
}

const SYSTEM =
  "You are a careful assistant that solves tasks step by step. You can call tools. " +
  "Think before you answer, use a tool when a computation or a lookup is needed, and give the final answer on its own line.";

const TOOL_SPECS = [
  { name: "python", description: "Run a short Python snippet and return what it prints.", param: "code" },
  { name: "search", description: "Search a document index and return the best matching passages.", param: "query" },
  { name: "run_tests", description: "Run the unit tests of the repository and report failures.", param: "path" },
  { name: "read_file", description: "Read a file of the repository.", param: "path" },
];

const ITEMS = ["boxes", "crates", "pallets", "parcels", "bottles", "tickets", "books", "lamps", "chairs", "bikes"];
const PLACES = ["warehouse", "bakery", "library", "factory", "harbor", "museum", "garden", "station", "market", "school"];
const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lena"];
const RIVERS = [
  ["Vienna", "Danube"],
  ["Cairo", "Nile"],
  ["Lyon", "Rhone"],
  ["Hamburg", "Elbe"],
  ["Kyiv", "Dnipro"],
  ["Basel", "Rhine"],
  ["Turin", "Po"],
  ["Warsaw", "Vistula"],
] as const;
const MODULES = ["stats", "parser", "cache", "scheduler", "tokenizer", "router", "metrics", "buffer"];
const FUNCS = ["mean", "median", "parse_header", "evict", "next_slot", "split_words", "route", "flush"];
const BUGS = [
  "fails on an empty list",
  "returns the wrong value for negative numbers",
  "raises an index error at the end of the input",
  "ignores the last element",
  "never releases the lock",
];

const THINK = [
  "Let me think about what the question is really asking.",
  "First I need the total for each day, then the sum.",
  "Wait, I should double check the units before multiplying.",
  "I will call the tool instead of doing the arithmetic by hand.",
  "The tool output confirms the intermediate value.",
  "Hmm, that does not match my estimate, so let me recompute it.",
  "The question gives two quantities and asks for their combination.",
  "So the answer should be a whole number, which is a good sanity check.",
  "Let me look at the failing test before changing anything.",
  "The traceback points at the loop bound, which is off by one.",
  "I should search for the city first and then read the passage.",
  "The passage mentions the river by name, so the lookup worked.",
  "Maybe I misread the problem, let me read it again carefully.",
  "Now I can combine the partial results into the final answer.",
  "Actually the second step already covers that case.",
  "This edge case matters because the input can be empty.",
];

const LOOP = [
  "Wait, let me verify this again.",
  "But maybe the other interpretation is correct, so let me check.",
  "Hmm, I am not sure, let me recompute from the beginning.",
  "Let me reconsider the first step once more.",
  "So the total is what I computed, unless I made an error earlier.",
];

const FINAL_OK = ["The answer is", "So the final answer is", "Therefore the result is", "Final answer:"];
const CODE_OK = ["All tests pass now.", "The fix works and every test passes.", "Done: the tests are green."];
const CODE_BAD = ["I could not make the last test pass.", "One test still fails, I need more time."];

/** All letter runs of the tables above (the tokenizer's word list). */
export function corpusWords(): string[] {
  const texts: string[] = [SYSTEM, ...THINK, ...LOOP, ...FINAL_OK, ...CODE_OK, ...CODE_BAD, ...ITEMS, ...PLACES, ...DAYS, ...NAMES];
  texts.push(...RIVERS.flat(), ...MODULES, ...FUNCS, ...BUGS);
  for (const t of TOOL_SPECS) texts.push(t.name, t.description, t.param);
  texts.push(...TEMPLATE_WORDS);
  const words = new Set<string>();
  for (const t of texts) for (const m of t.matchAll(/\p{L}+/gu)) words.add(m[0]);
  return [...words].sort();
}

/** Fixed words of the user/tool/chat-template strings built below. */
const TEMPLATE_WORDS = [
  "A ships on and times as many How in total did ship",
  "Which river flows through the city of Answer with the river name only",
  "The function in module Fix it so that all tests pass",
  "print passed failed FAILED test tests py def return if not raise ValueError empty len sum for range",
  "system user assistant tool Tools You may call one or more functions to assist with the user query",
  "name description parameters result results title passage score source wiki",
  "is the capital largest river rivers that through flows city known for its bridges",
  "assert Error line",
  "Please reason step by step and put your final answer on the last line",
];

function sentences(rng: Rng, n: number, pool: readonly string[] = THINK): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(rng.pick(pool));
  return out.join(" ");
}

const json = (o: unknown): string => JSON.stringify(o).replace(/":/g, '": ').replace(/,"/g, ', "');

function mathTask(rng: Rng, correct: boolean): Conversation {
  const item = rng.pick(ITEMS);
  const place = rng.pick(PLACES);
  const d1 = rng.pick(DAYS);
  const a = rng.int(12, 980);
  const k = rng.pick([2, 3, 4, 1.5, 2.5]);
  const total = a + a * k;
  const user = `A ${place} ships ${a} ${item} on ${d1} and ${k} times as many on the next day. How many ${item} did the ${place} ship in total?`;
  const code = `a = ${a}\nprint(a + a * ${k})`;
  const turns: Turn[] = [
    {
      reasoning: sentences(rng, rng.int(2, 5)),
      content: "",
      toolCalls: [{ name: "python", arguments: json({ code }) }],
      toolResults: [{ name: "python", content: String(total) }],
      raw: false,
    },
  ];
  if (rng.chance(0.35)) {
    turns.push({
      reasoning: sentences(rng, rng.int(1, 3)),
      content: "",
      toolCalls: [{ name: "python", arguments: json({ code: `print(${a} * ${k})` }) }],
      toolResults: [{ name: "python", content: String(a * k) }],
      raw: false,
    });
  }
  const answer = correct ? total : total + rng.pick([-a, a, 1, -1, 10]);
  turns.push({
    reasoning: sentences(rng, rng.int(1, 4)),
    content: `${rng.pick(FINAL_OK)} ${answer}`,
    toolCalls: [],
    toolResults: [],
    raw: false,
  });
  return { family: "math", system: SYSTEM, user, turns, correct, runaway: false };
}

function searchTask(rng: Rng, correct: boolean): Conversation {
  const [city, river] = rng.pick(RIVERS);
  const wrong = rng.pick(RIVERS.filter((r) => r[1] !== river))[1];
  const user = `Which river flows through the city of ${city}? Answer with the river name only.`;
  const result = json({
    results: [
      { title: `${city}`, passage: `${city} is known for its bridges over the ${river}.`, score: 0.91 },
      { title: "rivers", passage: `The ${wrong} is the largest river that flows through the region.`, score: 0.47 },
    ],
  });
  const turns: Turn[] = [
    {
      reasoning: sentences(rng, rng.int(1, 4)),
      content: "",
      toolCalls: [{ name: "search", arguments: json({ query: `river ${city}` }) }],
      toolResults: [{ name: "search", content: result }],
      raw: false,
    },
    {
      reasoning: sentences(rng, rng.int(1, 3)),
      content: correct ? river : wrong,
      toolCalls: [],
      toolResults: [],
      raw: false,
    },
  ];
  return { family: "search", system: SYSTEM, user, turns, correct, runaway: false };
}

function codeTask(rng: Rng, correct: boolean): Conversation {
  const mod = rng.pick(MODULES);
  const fn = rng.pick(FUNCS);
  const bug = rng.pick(BUGS);
  const user = `The function ${fn} in module ${mod} ${bug}. Fix it so that all tests pass.`;
  const failing = `1 failed, ${rng.int(3, 19)} passed\nFAILED tests/test_${mod}.py::test_${fn} - assert Error`;
  const turns: Turn[] = [
    {
      reasoning: sentences(rng, rng.int(1, 3)),
      content: "",
      toolCalls: [{ name: "run_tests", arguments: json({ path: `tests/test_${mod}.py` }) }],
      toolResults: [{ name: "run_tests", content: failing }],
      raw: false,
    },
    {
      reasoning: sentences(rng, rng.int(1, 3)),
      content: "",
      toolCalls: [{ name: "read_file", arguments: json({ path: `${mod}.py` }) }],
      toolResults: [
        { name: "read_file", content: `def ${fn}(xs):\n    return sum(xs) / len(xs)\n` },
      ],
      raw: false,
    },
    {
      reasoning: sentences(rng, rng.int(2, 4)),
      content: "",
      toolCalls: [{ name: "run_tests", arguments: json({ path: `tests/test_${mod}.py` }) }],
      toolResults: [{ name: "run_tests", content: correct ? `${rng.int(4, 20)} passed` : failing }],
      raw: false,
    },
    {
      reasoning: sentences(rng, rng.int(1, 2)),
      content: rng.pick(correct ? CODE_OK : CODE_BAD),
      toolCalls: [],
      toolResults: [],
      raw: false,
    },
  ];
  return { family: "code", system: SYSTEM, user, turns, correct, runaway: false };
}

/** One conversation; `runaway` makes the first turn reason in circles (cut by the response cap later). */
export function makeConversation(rng: Rng, opts: { pCorrect: number; runaway?: boolean; family?: string }): Conversation {
  const family = opts.family ?? rng.pick(["math", "math", "search", "code"]);
  const correct = rng.chance(opts.pCorrect);
  const conv = family === "search" ? searchTask(rng, correct) : family === "code" ? codeTask(rng, correct) : mathTask(rng, correct);
  if (rng.chance(0.15)) conv.turns[0]!.raw = true;
  if (opts.runaway) {
    const first = conv.turns[0]!;
    // ~8.5k tokens of looping reasoning: longer than any response cap we use.
    first.reasoning = `${first.reasoning} ${sentences(rng, 900, LOOP)}`;
    conv.turns = [first];
    conv.runaway = true;
    conv.correct = false;
  }
  return conv;
}

// ---------------------------------------------------------------------------------
// rendering

const FAMILY_TOOLS: Record<string, readonly string[]> = {
  math: ["python"],
  search: ["search"],
  code: ["run_tests", "read_file"],
};

function toolBlock(family: string): string {
  const names = FAMILY_TOOLS[family] ?? ["python"];
  const lines = TOOL_SPECS.filter((t) => names.includes(t.name)).map((t) =>
    json({
      type: "function",
      function: {
        name: t.name,
        description: t.description,
        parameters: { type: "object", properties: { [t.param]: { type: "string" } }, required: [t.param] },
      },
    }),
  );
  return `\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n<tools>\n${lines.join("\n")}\n</tools>`;
}

/** Qwen3 chat template up to the first assistant header (the prompt tokens). */
export function renderPrompt(c: Conversation): string {
  return `<|im_start|>system\n${c.system}${toolBlock(c.family)}<|im_end|>\n<|im_start|>user\n${c.user}<|im_end|>\n<|im_start|>assistant\n`;
}

const callMarkup = (t: ToolCall): string =>
  `<tool_call>\n${json({ name: t.name, arguments: JSON.parse(t.arguments) as unknown })}\n</tool_call>`;

export interface Segment {
  text: string;
  /** Generated by the policy (loss mask 1) vs. tool output / template (0). */
  trained: boolean;
  /** 1-based assistant turn. */
  turn: number;
}

/** The response as the engine saw it: assistant turns (trained) and tool responses (masked). */
export function renderResponse(c: Conversation): Segment[] {
  const out: Segment[] = [];
  c.turns.forEach((t, i) => {
    const close = c.runaway ? "" : "\n</think>\n\n";
    const calls = t.toolCalls.map(callMarkup).join("\n");
    const end = c.runaway ? "" : "<|im_end|>";
    out.push({ text: `<think>\n${t.reasoning}${close}${t.content}${calls ? `${t.content ? "\n" : ""}${calls}` : ""}${end}`, trained: true, turn: i + 1 });
    if (t.toolResults.length) {
      const body = t.toolResults.map((r) => `<tool_response>\n${r.content}\n</tool_response>`).join("\n");
      out.push({ text: `\n<|im_start|>user\n${body}<|im_end|>\n<|im_start|>assistant\n`, trained: false, turn: i + 1 });
    }
  });
  return out;
}

/** OpenAI-style messages (the trajectory sidecar's `messages`). */
export function toMessages(c: Conversation): Record<string, unknown>[] {
  const msgs: Record<string, unknown>[] = [
    { role: "system", content: c.system },
    { role: "user", content: c.user },
  ];
  for (const t of c.turns) {
    if (t.raw) {
      const calls = t.toolCalls.map(callMarkup).join("\n");
      msgs.push({ role: "assistant", content: `<think>\n${t.reasoning}\n</think>\n\n${t.content}${calls}` });
    } else {
      const m: Record<string, unknown> = { role: "assistant", content: t.content, reasoning_content: t.reasoning };
      if (t.toolCalls.length) m.tool_calls = t.toolCalls.map((tc) => ({ function: { name: tc.name, arguments: tc.arguments } }));
      msgs.push(m);
    }
    for (const r of t.toolResults) msgs.push({ role: "tool", name: r.name, content: r.content });
  }
  return msgs;
}

/** The sample's `prompt` as stored in the rollout dump: the chat so far, tool results included. */
export function toPromptMessages(c: Conversation): Record<string, unknown>[] {
  return toMessages(c).map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.content };
    if (m.name !== undefined) out.name = m.name;
    return out;
  });
}
