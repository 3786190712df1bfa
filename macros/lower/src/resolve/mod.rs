//! Resolution, between parsing and lowering: what the names a function
//! calls and the place it is written mean, where the macro cannot see the
//! caller's scope. `helpers` gathers the `#[oxla::func]` helpers a body
//! calls (through their macros) into a `HelperTable` that lowering inlines
//! from; `site` says where the function is written; `builtins` lets rustc
//! check that a bare built-in name is oxla's; `source_calls` turns a call of
//! an unknown name into an error in the user's terms.

pub(crate) mod builtins;
pub mod helpers;
pub mod site;
pub(crate) mod source_calls;
