//! Samplers (filled in below).
