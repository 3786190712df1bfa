//! A PTX function body under construction: virtual registers, labels, lines.
//!
//! PTX has unlimited typed virtual registers (`ptxas` allocates the real
//! ones), so every intermediate gets a fresh one and the declarations are
//! written once the body is known.

use std::fmt::Write as _;

/// Register classes, each declared as one `.reg` array.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Class {
    Pred,
    B16,
    B32,
    B64,
    F32,
    F64,
}

const CLASSES: [(Class, &str, &str); 6] = [
    (Class::Pred, ".pred", "%p"),
    (Class::B16, ".b16", "%h"),
    (Class::B32, ".b32", "%r"),
    (Class::B64, ".b64", "%rd"),
    (Class::F32, ".f32", "%f"),
    (Class::F64, ".f64", "%fd"),
];

pub(crate) struct Func {
    decls: String,
    body: String,
    counts: [u32; 6],
    labels: u32,
}

impl Func {
    pub(crate) fn new() -> Func {
        Func {
            decls: String::new(),
            body: String::new(),
            counts: [0; 6],
            labels: 0,
        }
    }

    /// A fresh virtual register of `class`.
    pub(crate) fn reg(&mut self, class: Class) -> String {
        let i = CLASSES
            .iter()
            .position(|c| c.0 == class)
            .expect("register class");
        let n = self.counts[i];
        self.counts[i] += 1;
        format!("{}{}", CLASSES[i].2, n)
    }

    /// One instruction (the `;` is added).
    pub(crate) fn ins(&mut self, text: impl AsRef<str>) {
        let _ = writeln!(self.body, "\t{};", text.as_ref());
    }

    /// A comment line, to keep dumps readable.
    pub(crate) fn comment(&mut self, text: impl AsRef<str>) {
        let _ = writeln!(self.body, "\t// {}", text.as_ref());
    }

    /// A declaration (e.g. `.shared`), placed before all instructions.
    pub(crate) fn decl(&mut self, text: impl AsRef<str>) {
        let _ = writeln!(self.decls, "\t{}", text.as_ref());
    }

    /// A fresh label name.
    pub(crate) fn new_label(&mut self, stem: &str) -> String {
        self.labels += 1;
        format!("$L_{stem}_{}", self.labels)
    }

    pub(crate) fn place_label(&mut self, label: &str) {
        let _ = writeln!(self.body, "{label}:");
    }

    /// The register declarations followed by the body.
    pub(crate) fn finish(self) -> String {
        let mut out = String::new();
        for (i, (_, ty, prefix)) in CLASSES.iter().enumerate() {
            // Declare at least one of each so the text never has `<0>`.
            let _ = writeln!(out, "\t.reg {ty} {prefix}<{}>;", self.counts[i].max(1));
        }
        out.push_str(&self.decls);
        out.push_str(&self.body);
        out
    }
}

/// An `f32` immediate in PTX's exact hexadecimal form.
pub(crate) fn f32_imm(x: f32) -> String {
    format!("0f{:08X}", x.to_bits())
}

/// An `f64` immediate in PTX's exact hexadecimal form.
pub(crate) fn f64_imm(x: f64) -> String {
    format!("0d{:016X}", x.to_bits())
}
