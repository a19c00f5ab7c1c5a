// What every page uses, made once in main.ts and provided to the component tree: the page's
// settings, the typed API client, the change stream and who the caller is.
import { inject, type InjectionKey, type Ref } from 'vue';
import type { ApiClient, Schemas } from './api/client.js';
import type { GuiConfig } from './config.js';
import type { ChangeStream } from './live/change-stream.js';

export interface Services {
  config: GuiConfig;
  api: ApiClient;
  changes: ChangeStream;
  /** The caller as `/who-am-i` names it; undefined until known. */
  caller: Ref<Schemas['Caller'] | undefined>;
}

export const SERVICES: InjectionKey<Services> = Symbol('services');

export function useServices(): Services {
  const services = inject(SERVICES);
  if (!services) throw new Error('the services are provided by main.ts');
  return services;
}
