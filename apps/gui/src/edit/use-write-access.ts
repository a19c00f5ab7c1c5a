// Whether the caller may change resources of a kind here (docs/gui.md, Editing), for the pages'
// edit, create and delete controls. The API says once whether it is read-only (`GET /`); every
// control of the page shares that answer.
import { computed, ref, type ComputedRef, type Ref } from 'vue';
import { dataOf, type ApiClient } from '../api/client.js';
import { useServices } from '../services.js';
import { writeAccess, type EditableKind, type WriteAccess } from './resource-edit.js';

const readOnlyAnswers = new WeakMap<ApiClient, Promise<boolean>>();

/** `GET /`'s `readOnly`, asked once per client; a failed answer is asked again next time. */
function apiReadOnly(api: ApiClient): Promise<boolean> {
  let answer = readOnlyAnswers.get(api);
  if (!answer) {
    answer = api.GET('/').then((result) => dataOf(result).readOnly);
    answer.catch(() => readOnlyAnswers.delete(api));
    readOnlyAnswers.set(api, answer);
  }
  return answer;
}

/** The access to the kind, undefined until the API has said whether it is read-only. */
export function useWriteAccess(kind: () => EditableKind | undefined): ComputedRef<WriteAccess | undefined> {
  const { api, config } = useServices();
  const readOnly: Ref<boolean | undefined> = ref();
  const failure = ref<string>();
  apiReadOnly(api).then(
    (value) => (readOnly.value = value),
    (error: unknown) => (failure.value = error instanceof Error ? error.message : String(error)),
  );
  return computed(() => {
    const current = kind();
    if (failure.value !== undefined) return { allowed: false, reason: `Whether this control plane accepts changes is not known: ${failure.value}` };
    if (!current || readOnly.value === undefined) return undefined;
    return writeAccess(current, readOnly.value, config.mode);
  });
}
