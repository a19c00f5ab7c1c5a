export { describeResourceStore, type OpenTestStore, type TestFunctions, type TestStoreOptions } from './store-suite.js';
