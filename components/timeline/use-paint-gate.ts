"use client";

import { useState } from "react";

/**
 * Paint gating: the lanes are drawn once their inputs have all answered. While `hold` is
 * true (one of them is still on its first request) the last complete value is returned,
 * so 32 lanes are painted once, not once per answer.
 */
export function useHeldWhile<T>(hold: boolean, value: T): T {
  const [held, setHeld] = useState(value);
  if (!hold && held !== value) setHeld(value);
  return hold ? held : value;
}
