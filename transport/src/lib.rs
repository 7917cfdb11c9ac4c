//! Discovery and the loopback HTTP client of the termsprawl agent tool protocol (skeleton).
