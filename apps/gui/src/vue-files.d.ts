// For tools that read TypeScript without Vue's compiler (the linter): a .vue file is a component.
// vue-tsc reads the files themselves and ignores this.
declare module '*.vue' {
  import type { DefineComponent } from 'vue';

  const component: DefineComponent;
  export default component;
}
