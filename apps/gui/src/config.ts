// What the control plane tells the page when it serves index.html (docs/gui.md): where the API is,
// the path the app lives under, and what it talks to. A page served otherwise (the Vite dev
// server) falls back to the API on its own origin.
export interface GuiConfig {
  /** The API's base URL; '' for the page's own origin. */
  apiUrl: string;
  /** The path the app is under, without a trailing slash (`/gui`). */
  basePath: string;
  product: string;
  version: string;
  mode: 'standalone' | 'zone' | 'global';
}

const CONFIG_ELEMENT_ID = 'mesh-gui-config';

export function readConfig(doc: Document = document): GuiConfig {
  const fallback: GuiConfig = { apiUrl: '', basePath: new URL('.', doc.baseURI).pathname.replace(/\/$/, ''), product: 'Mesh', version: '', mode: 'standalone' };
  const text = doc.getElementById(CONFIG_ELEMENT_ID)?.textContent;
  if (!text) return fallback;
  return { ...fallback, ...(JSON.parse(text) as Partial<GuiConfig>) };
}
