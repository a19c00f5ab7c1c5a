/** The version this runner reports to the control plane (`version.meshDp` of its proxy's insight). */
export const VERSION = '2.5.0';
