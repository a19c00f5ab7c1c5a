// Proxy configuration rendering lands here: Envoy v3 resources from the mesh state. See README.md.
export {};
