//! Parsing, the first stage: the attribute stack (`attr`) becomes a list of
//! `TransformAttr`s, and the Rust types of the signature (`types`) become a
//! `RustTy` each, with the IR type it stands for. Lowering and code
//! generation both work from these, never from the raw tokens.

pub mod attr;
pub mod custom;
pub mod types;
