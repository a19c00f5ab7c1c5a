// Policy matching lands here: which policies apply to each inbound, outbound and service of a
// proxy, with the reference's ranking. See README.md.
export {};
