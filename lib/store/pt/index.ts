/**
 * torch `.pt` reader — see load.ts for the policy (lazy storages read with positional
 * I/O, unknown Python classes kept as opaque objects, `PtFormatError` for bad files).
 */
export * from "./load";
export { openZip } from "./zip";
export { unpickle, callPy, builtinGlobal, PY_SETSTATE, type PickleHooks, type PyCallable, type CallKind, type NdData } from "./pickle";
export { decodeTensor, f16ToNumber, bf16ToNumber, DTYPE_ITEMSIZE, STORAGE_DTYPES } from "./tensor";
