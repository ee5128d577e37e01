"use server";
/**
 * Run list actions: tags and notes of a run (README "Comparing runs"). Any signed-in member
 * may edit them; the session is re-checked here (a hidden button is not a permission
 * check) and the run id must be one the registry knows.
 */
import { formText } from "@/lib/actions/form";
import { getDb } from "@/lib/server/db";
import { AnnotationError, parseTags, setAnnotation } from "@/lib/server/runs/annotations";
import { getRegistry } from "@/lib/server/runs/context";
import { currentPageUser } from "@/lib/server/session";

export interface AnnotationState {
  ok: string | null;
  error: string | null;
}

export async function saveRunAnnotationAction(_: AnnotationState, form: FormData): Promise<AnnotationState> {
  const user = await currentPageUser();
  if (!user) return { ok: null, error: "sign in to edit tags and notes" };
  const runId = formText(form, "run").trim();
  if (!runId || !getRegistry().find(runId)) return { ok: null, error: `unknown run '${runId}'` };
  try {
    setAnnotation(getDb(), runId, { tags: parseTags(formText(form, "tags")), notes: formText(form, "notes") }, user.name);
    return { ok: "saved", error: null };
  } catch (err) {
    if (err instanceof AnnotationError) return { ok: null, error: err.message };
    throw err;
  }
}
