// The GUI's entry: reads what the control plane told the page, makes the services every page
// uses, and mounts the app under its base path.
import { createApp, ref } from 'vue';
import App from './App.vue';
import { createApiClient, type Schemas } from './api/client.js';
import { token } from './api/session.js';
import { readConfig } from './config.js';
import { ChangeStream } from './live/change-stream.js';
import { createAppRouter } from './router.js';
import { SERVICES, type Services } from './services.js';
import './styles.css';

const config = readConfig();
const api = createApiClient(config.apiUrl);
const changes = new ChangeStream({
  apiUrl: config.apiUrl,
  headers: (): Record<string, string> => (token.value ? { Authorization: `Bearer ${token.value}` } : {}),
});
const services: Services = { config, api, changes, caller: ref<Schemas['Caller']>() };

createApp(App).provide(SERVICES, services).use(createAppRouter(config)).mount('#app');
changes.followVisibility(document);
