// Data a page shows, kept current: loaded when the page opens or its key (the route's params)
// changes, and again when the change stream reports a change of a kind it shows. Reloads are
// coalesced, so a burst of changes costs one request per interval, and the data shown stays in
// place while a reload runs.
import { onBeforeUnmount, ref, shallowRef, watch, type Ref, type ShallowRef } from 'vue';
import { useServices } from '../services.js';
import type { ChangeEvent } from './change-stream.js';

export interface LiveData<T> {
  data: ShallowRef<T | undefined>;
  error: Ref<Error | undefined>;
  /** True until the first load ends. */
  loading: Ref<boolean>;
  reload(): Promise<void>;
}

export interface LiveDataOptions {
  /** The kinds whose changes may alter the data. */
  types: readonly string[];
  /** The one mesh of mesh-scoped kinds whose changes matter (see `Watcher.mesh`). */
  mesh?: () => string;
  /** Narrows the changes that reload (those of one proxy). */
  matches?: (event: ChangeEvent) => boolean;
  /** Loads again, from nothing, when it changes (the route's params, as a string). */
  key?: () => unknown;
}

/** The least time between two reloads caused by changes, in milliseconds. */
const RELOAD_INTERVAL_MS = 200;

export function useLiveData<T>(load: () => Promise<T>, options: LiveDataOptions): LiveData<T> {
  const { changes } = useServices();
  const data = shallowRef<T>();
  const error = ref<Error>();
  const loading = ref(true);
  let running: Promise<void> | undefined;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const reload = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        data.value = await load();
        error.value = undefined;
      } catch (failure) {
        error.value = failure instanceof Error ? failure : new Error(String(failure));
      } finally {
        loading.value = false;
        running = undefined;
        if (again) {
          again = false;
          scheduleReload();
        }
      }
    })();
    return running;
  };

  function scheduleReload(): void {
    timer ??= setTimeout(() => {
      timer = undefined;
      void reload();
    }, RELOAD_INTERVAL_MS);
  }

  const stopWatching = changes.watch({
    types: options.types,
    ...(options.mesh ? { mesh: options.mesh } : {}),
    onChange: (event) => {
      if (!options.matches || options.matches(event)) scheduleReload();
    },
    onResync: scheduleReload,
  });
  watch(
    options.key ?? (() => undefined),
    (_key, previous) => {
      // Another resource: what was shown is not its data, and its mesh may be another.
      if (previous !== undefined) {
        data.value = undefined;
        loading.value = true;
        changes.reconsider();
      }
      void reload();
    },
    { immediate: true },
  );
  onBeforeUnmount(() => {
    stopWatching();
    clearTimeout(timer);
  });
  return { data, error, loading, reload };
}
