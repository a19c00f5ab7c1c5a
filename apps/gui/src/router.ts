// The GUI's pages, under the base path the control plane serves it at (history mode: the server
// answers every page's URL with the app, docs/gui.md).
import { createRouter, createWebHistory, type RouteRecordRaw } from 'vue-router';
import type { GuiConfig } from './config.js';

export const routes: RouteRecordRaw[] = [
  { path: '/', name: 'home', component: () => import('./pages/HomePage.vue'), meta: { title: 'Home' } },
  { path: '/meshes', name: 'meshes', component: () => import('./pages/MeshesPage.vue'), meta: { title: 'Meshes' } },
  { path: '/meshes/:mesh', name: 'mesh', component: () => import('./pages/MeshPage.vue'), meta: { title: 'Mesh' } },
  { path: '/meshes/:mesh/data-plane-proxies', name: 'dataplanes', component: () => import('./pages/DataplanesPage.vue'), meta: { title: 'Data plane proxies' } },
  {
    path: '/meshes/:mesh/data-plane-proxies/:name/:tab(overview|policies|config|stats|clusters)?',
    name: 'dataplane',
    component: () => import('./pages/DataplanePage.vue'),
    meta: { title: 'Data plane proxy' },
  },
  { path: '/meshes/:mesh/services', name: 'services', component: () => import('./pages/services/ServicesPage.vue'), meta: { title: 'Services' } },
  { path: '/meshes/:mesh/services/:service', name: 'service', component: () => import('./pages/services/ServicePage.vue'), meta: { title: 'Service' } },
  { path: '/meshes/:mesh/service-map', name: 'service-map', component: () => import('./pages/services/ServiceMapPage.vue'), meta: { title: 'Service map' } },
  { path: '/meshes/:mesh/gateways', name: 'gateways', component: () => import('./pages/gateways/GatewaysPage.vue'), meta: { title: 'Gateways' } },
  { path: '/meshes/:mesh/gateways/builtin/:name', name: 'gateway', component: () => import('./pages/gateways/GatewayPage.vue'), meta: { title: 'Builtin gateway' } },
  {
    path: '/meshes/:mesh/gateways/delegated/:name',
    name: 'delegated-gateway',
    component: () => import('./pages/gateways/DelegatedGatewayPage.vue'),
    meta: { title: 'Delegated gateway' },
  },
  { path: '/meshes/:mesh/policies', name: 'policies', component: () => import('./pages/policies/PoliciesPage.vue'), meta: { title: 'Policies' } },
  { path: '/meshes/:mesh/policies/:kind/:name', name: 'policy', component: () => import('./pages/policies/PolicyPage.vue'), meta: { title: 'Policy' } },
  { path: '/diagnostics', name: 'diagnostics', component: () => import('./pages/DiagnosticsPage.vue'), meta: { title: 'Diagnostics' } },
  { path: '/sign-in', name: 'sign-in', component: () => import('./pages/SignInPage.vue'), meta: { title: 'Sign in' } },
  { path: '/zones', name: 'zones', component: () => import('./pages/zones/ZonesPage.vue'), meta: { title: 'Zones' } },
  { path: '/zones/:zone', name: 'zone', component: () => import('./pages/zones/ZonePage.vue'), meta: { title: 'Zone' } },
  // Editing (docs/gui.md, Editing): the API path of what is created or changed, under /new or /edit.
  { path: '/new/meshes', name: 'mesh-create', component: () => import('./edit/EditPage.vue'), meta: { title: 'Create a mesh' } },
  { path: '/new/meshes/:mesh/:kind', name: 'resource-create', component: () => import('./edit/EditPage.vue'), meta: { title: 'Create' } },
  { path: '/edit/meshes/:mesh', name: 'mesh-edit', component: () => import('./edit/EditPage.vue'), meta: { title: 'Change a mesh' } },
  { path: '/edit/meshes/:mesh/:kind/:name', name: 'resource-edit', component: () => import('./edit/EditPage.vue'), meta: { title: 'Change' } },
  { path: '/:path(.*)*', name: 'not-found', component: () => import('./pages/NotFoundPage.vue'), meta: { title: 'Not found' } },
];

export function createAppRouter(config: Pick<GuiConfig, 'basePath' | 'product'>) {
  const router = createRouter({ history: createWebHistory(`${config.basePath}/`), routes });
  router.afterEach((to) => {
    document.title = `${typeof to.meta.title === 'string' ? to.meta.title : ''} · ${config.product}`;
  });
  return router;
}
