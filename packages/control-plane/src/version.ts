/** The product name and the version this build reports (`/`, subscriptions, `/versions`). */
export const PRODUCT = 'Mesh';
export const VERSION = '2.5.0';
