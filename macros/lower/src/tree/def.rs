//! A parameter struct's definition as the macros see it (`TreeDef`): its
//! fields' names and kinds, read from the struct or from its macro's payload.

use crate::lower::ident_name;
use crate::parse::types::{elem_of, float_of, ndarray_of, strip_group, RustTy};
use crate::resolve::helpers::{self, HelperTable};
use oxla_core::DType;
use quote::ToTokens;
use std::rc::Rc;
use syn::Expr;

/// The `__resolve!` kind that continues a derive.
pub(crate) const DERIVE_KIND: &str = "tree";

pub(super) const SUPPORTED_FIELDS: &str = "supported field types: an array `Array1<F>`…`Array6<F>` \
     (or `Array<F, IxN>`), a scalar `F`, where F is f32 or f64, one float type for the whole struct, \
     another struct with `#[derive(oxla::Tree)]`, or a fixed-size array `[T; N]` of these";

/// A parameter struct with its fields resolved.
#[derive(Debug)]
pub(crate) struct TreeDef {
    pub(crate) name: String,
    pub(crate) elem: DType,
    pub(crate) fields: Vec<(syn::Ident, Field)>,
}

#[derive(Clone, Debug)]
pub(crate) enum Field {
    /// A scalar or an array of the struct's float type.
    Leaf(RustTy),
    Tree(Rc<TreeDef>),
    /// `[T; N]`.
    Array(Box<Field>, usize),
}

/// One step of the path from a struct to one of its leaves.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    Name(String),
    Index(usize),
}

impl Field {
    /// The leaves in order: their path below this field and their type.
    pub(super) fn leaves(&self) -> Vec<(Vec<Step>, RustTy)> {
        match self {
            Field::Leaf(t) => vec![(Vec::new(), t.clone())],
            Field::Tree(def) => def.leaves(),
            Field::Array(elem, n) => {
                let inner = elem.leaves();
                let mut out = Vec::new();
                for i in 0..*n {
                    for (path, t) in &inner {
                        let mut p = vec![Step::Index(i)];
                        p.extend(path.iter().cloned());
                        out.push((p, t.clone()));
                    }
                }
                out
            }
        }
    }

    pub(super) fn dtype(&self) -> DType {
        match self {
            Field::Leaf(t) => t.dtype(),
            Field::Tree(def) => def.elem,
            Field::Array(elem, _) => elem.dtype(),
        }
    }
}

impl TreeDef {
    /// The leaves in order: their field path and type.
    pub(crate) fn leaves(&self) -> Vec<(Vec<Step>, RustTy)> {
        let mut out = Vec::new();
        for (name, f) in &self.fields {
            for (path, t) in f.leaves() {
                let mut p = vec![Step::Name(ident_name(name))];
                p.extend(path);
                out.push((p, t));
            }
        }
        out
    }

    pub(super) fn field_names(&self) -> String {
        self.fields
            .iter()
            .map(|(n, _)| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What a field's type is.
pub(super) enum FieldTy<'a> {
    Leaf(RustTy),
    Tree(&'a syn::Path),
    Array(Box<FieldTy<'a>>, usize),
    Bad(String),
}

impl FieldTy<'_> {
    /// The field, its structs resolved in `table`; `Ok(None)` when one is
    /// unknown.
    pub(super) fn resolve(&self, table: &HelperTable) -> Result<Option<Field>, String> {
        Ok(Some(match self {
            FieldTy::Leaf(t) => Field::Leaf(t.clone()),
            FieldTy::Tree(p) => match resolve(p, table)? {
                Some(def) => Field::Tree(def),
                None => return Ok(None),
            },
            FieldTy::Array(e, n) => match e.resolve(table)? {
                Some(f) => Field::Array(Box::new(f), *n),
                None => return Ok(None),
            },
            FieldTy::Bad(e) => return Err(e.clone()),
        }))
    }
}

pub(super) fn field_ty(ty: &syn::Type) -> FieldTy<'_> {
    if let Some(d) = float_of(ty) {
        return FieldTy::Leaf(RustTy::Scalar(d));
    }
    if let Some(r) = ndarray_of(ty, "Array") {
        return match r {
            Ok((d, rank)) if d.is_float() => FieldTy::Leaf(RustTy::NdArray(d, rank)),
            Ok(_) => FieldTy::Bad(format!(
                "an integer or bool array is not a parameter: {SUPPORTED_FIELDS}"
            )),
            Err(e) => FieldTy::Bad(format!("{e}; {SUPPORTED_FIELDS}")),
        };
    }
    if elem_of(ty).is_some() {
        return FieldTy::Bad(format!(
            "an integer or bool field is not a parameter: {SUPPORTED_FIELDS}"
        ));
    }
    if let syn::Type::Array(a) = strip_group(ty) {
        let len = match &a.len {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse::<usize>().ok(),
            _ => None,
        };
        return match len {
            Some(n) => match field_ty(&a.elem) {
                FieldTy::Bad(e) => FieldTy::Bad(e),
                e => FieldTy::Array(Box::new(e), n),
            },
            None => FieldTy::Bad(format!(
                "the length `{}` of an array field must be an integer literal",
                a.len.to_token_stream()
            )),
        };
    }
    if let syn::Type::Tuple(t) = strip_group(ty) {
        let n = t.elems.len();
        return FieldTy::Bad(format!(
            "a tuple field (of {n} parts) is not supported yet: make it a struct with `#[derive(oxla::Tree)]` (its parts named fields), or a fixed-size array `[T; {n}]` when its parts have one type; {SUPPORTED_FIELDS}"
        ));
    }
    match tree_path(ty) {
        Some(p) => FieldTy::Tree(p),
        None => FieldTy::Bad(format!(
            "unsupported field type `{}`: {SUPPORTED_FIELDS}",
            ty.to_token_stream().to_string().replace(' ', "")
        )),
    }
}

/// A type that may name a parameter struct: a plain path (no generic
/// arguments) whose last segment is capitalized and is not one of the
/// standard or ndarray types oxla reports on by itself.
pub(crate) fn tree_path(ty: &syn::Type) -> Option<&syn::Path> {
    let syn::Type::Path(p) = strip_group(ty) else {
        return None;
    };
    if p.qself.is_some() || p.path.segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    let last = p.path.segments.last()?.ident.to_string();
    let known = last.starts_with("Array")
        || matches!(
            last.as_str(),
            "Vec" | "String" | "Option" | "Box" | "Rc" | "Arc" | "HashMap" | "Self" | "Ix1"
        );
    (last.starts_with(|c: char| c.is_ascii_uppercase()) && !known).then_some(&p.path)
}

/// The struct `path` names, resolved in `table`. `Ok(None)` when unknown:
/// it is noted, for the expansion to ask its macro.
pub(crate) fn resolve(
    path: &syn::Path,
    table: &HelperTable,
) -> Result<Option<Rc<TreeDef>>, String> {
    let Some((entry, callees)) = table.get_tree(path) else {
        helpers::note_unknown(path);
        return Ok(None);
    };
    let item = &entry.item;
    let syn::Fields::Named(named) = &item.fields else {
        return Err(format!("`{}` has no named fields", item.ident));
    };
    let mut fields = Vec::new();
    let mut elem = None;
    for f in &named.named {
        let Some(name) = f.ident.clone() else {
            continue;
        };
        let Some(field) = field_ty(&f.ty).resolve(&callees)? else {
            return Ok(None);
        };
        let d = field.dtype();
        if *elem.get_or_insert(d) != d {
            return Err(format!("`{}` mixes float types", item.ident));
        }
        fields.push((name, field));
    }
    Ok(Some(Rc::new(TreeDef {
        name: item.ident.to_string(),
        elem: elem.unwrap_or(DType::F32),
        fields,
    })))
}
