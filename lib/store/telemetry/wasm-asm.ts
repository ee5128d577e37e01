/**
 * Just enough of the WebAssembly binary format to write a small module by hand: one
 * exported memory and exported functions over i32 / i64 / f64 values, no imports, no tables.
 * The instructions are the spec's opcodes (WebAssembly Core Specification 2.0, §5.4);
 * each helper returns its bytes, so a function body is a flat list of them.
 *
 * It exists so a hot decoder can run as WebAssembly without a compiler toolchain in the
 * install (gpu-wasm.ts); `new WebAssembly.Module` validates what it writes.
 */

export type Code = number[];

/** Value types. */
export const I32 = 0x7f;
export const I64 = 0x7e;
export const F64 = 0x7c;
export type ValType = typeof I32 | typeof I64 | typeof F64;

function uleb(n: number): Code {
  const out: Code = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

function sleb(v: bigint): Code {
  const out: Code = [];
  for (;;) {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    const done = (v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0);
    out.push(done ? b : b | 0x80);
    if (done) return out;
  }
}

const mem = (opcode: number, offset = 0): Code => [opcode, 0, ...uleb(offset)]; // alignment hint 0: any address

/** Instructions (§5.4). Loads and stores take their address from the stack, plus a constant offset. */
export const op = {
  block: (...body: Code[]): Code => [0x02, 0x40, ...body.flat(), 0x0b],
  loop: (...body: Code[]): Code => [0x03, 0x40, ...body.flat(), 0x0b],
  if: (...body: Code[]): Code => [0x04, 0x40, ...body.flat(), 0x0b],
  br: (depth: number): Code => [0x0c, ...uleb(depth)],
  brIf: (depth: number): Code => [0x0d, ...uleb(depth)],
  get: (local: number): Code => [0x20, ...uleb(local)],
  set: (local: number): Code => [0x21, ...uleb(local)],
  tee: (local: number): Code => [0x22, ...uleb(local)],
  i32Load: (offset = 0) => mem(0x28, offset),
  i64Load: (offset = 0) => mem(0x29, offset),
  f64Load: (offset = 0) => mem(0x2b, offset),
  i32Load8u: (offset = 0) => mem(0x2d, offset),
  i32Load16u: (offset = 0) => mem(0x2f, offset),
  i32Store: (offset = 0) => mem(0x36, offset),
  i64Store: (offset = 0) => mem(0x37, offset),
  f64Store: (offset = 0) => mem(0x39, offset),
  i32Store8: (offset = 0) => mem(0x3a, offset),
  i32Store16: (offset = 0) => mem(0x3b, offset),
  i32: (v: number): Code => [0x41, ...sleb(BigInt(v | 0))],
  i64: (v: bigint): Code => [0x42, ...sleb(BigInt.asIntN(64, v))],
  i32Eqz: [0x45],
  i32Eq: [0x46],
  i32Ne: [0x47],
  i32LtU: [0x49],
  i32GtU: [0x4b],
  i32GeU: [0x4f],
  i64Ne: [0x52],
  i64GeU: [0x5a],
  f64Ne: [0x62],
  i32Add: [0x6a],
  i32Sub: [0x6b],
  i32Mul: [0x6c],
  i32And: [0x71],
  i32Or: [0x72],
  i32Xor: [0x73],
  i64Add: [0x7c],
  i64Mul: [0x7e],
  f64Div: [0xa3],
  i64ExtendI32U: [0xad],
  f64ConvertI64U: [0xba],
};

export interface FuncSpec {
  name: string;
  params: ValType[];
  results: ValType[];
  /** Locals after the params, by type. */
  locals: ValType[];
  body: Code;
}

function section(id: number, content: Code): Code {
  return [id, ...uleb(content.length), ...content];
}

function vec(items: Code[]): Code {
  return [...uleb(items.length), ...items.flat()];
}

function name(s: string): Code {
  const b = [...Buffer.from(s, "utf8")];
  return [...uleb(b.length), ...b];
}

/** A module of `funcs` and one memory of `pages` 64 KiB pages, exported as `memory`; every function exported by name. */
export function assemble(pages: number, funcs: FuncSpec[]): Uint8Array<ArrayBuffer> {
  const types = funcs.map((f) => [0x60, ...vec(f.params.map((t) => [t])), ...vec(f.results.map((t) => [t]))]);
  const bodies = funcs.map((f) => {
    const locals = vec(f.locals.map((t) => [1, t]));
    const code = [...locals, ...f.body, 0x0b];
    return [...uleb(code.length), ...code];
  });
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(types)),
    ...section(3, vec(funcs.map((_, i) => uleb(i)))),
    ...section(5, vec([[0x00, ...uleb(pages)]])),
    ...section(7, vec([[...name("memory"), 0x02, 0], ...funcs.map((f, i) => [...name(f.name), 0x00, ...uleb(i)])])),
    ...section(10, vec(bodies)),
  ];
  return Uint8Array.from(bytes);
}
