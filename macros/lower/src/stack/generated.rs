//! What the stack hands to code generation: each function the macro emits,
//! with its final IR and where it comes from.

use crate::lower::consts::ConstParam;
use crate::lower::IndexCheck;
use crate::parse::attr::TransformKind;
use oxla_core::transforms::Step;
use oxla_core::Function;

/// Where a generated function comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// The annotated function itself.
    Original,
    /// An attribute applied to the function named `input`.
    Transform { kind: TransformKind, input: String },
}

/// One function the macro emits, with its final (transformed, simplified) IR.
#[derive(Clone, Debug)]
pub struct GeneratedFn {
    pub name: syn::Ident,
    pub vis: syn::Visibility,
    pub function: Function,
    pub origin: Origin,
    /// The index checks of the original function whose parameter this
    /// function still has (see `IndexCheck`).
    pub index_checks: Vec<IndexCheck>,
    /// The constants the original function reads: hidden parameters of
    /// every generated function (see `consts`).
    pub consts: Vec<ConstParam>,
    /// The transform steps from the original function to this one (empty
    /// for the original): the runtime derives it again from the original
    /// when a call broadcasts a size-1 argument.
    pub steps: Vec<Step>,
    /// The original function, which `steps` start from.
    pub original: std::sync::Arc<Original>,
    /// Whether another attribute of the expansion transforms this function
    /// (then its collectives may leave axes for that one to bind).
    pub transformed: bool,
}

/// The original function of an expansion, shared by every function it
/// generates; its IR text is printed once, when a generated function's
/// code first needs it (scalar-only functions never do).
#[derive(Debug)]
pub struct Original {
    pub function: Function,
    pub(super) text: std::sync::OnceLock<String>,
}

impl Original {
    pub fn text(&self) -> &str {
        self.text
            .get_or_init(|| oxla_core::text::print(&self.function))
    }
}

/// `NAME_IR` for a function called `name`.
pub fn ir_const_name(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_uppercase());
    }
    out.push_str("_IR");
    out
}
