//! Reading what oxla made of a function: its IR, kernels, Cranelift IR, PTX.

use oxla_core::exec::Program;
use oxla_core::kernel::fusion::fuse;

/// The compiled forms of one function, from the IR text its macro emitted
/// (each generated function `name` comes with a `NAME_IR` constant).
pub struct Inspect {
    program: Program,
}

impl Inspect {
    /// Parse and fuse an IR text such as a `NAME_IR` constant.
    pub fn new(ir: &str) -> Result<Inspect, String> {
        let f = oxla_core::text::parse(ir)?;
        Ok(Inspect { program: fuse(&f)? })
    }

    pub(crate) fn from_program(program: Program) -> Inspect {
        Inspect { program }
    }

    /// The program: its function and kernels (a type of `oxla_core`, an
    /// implementation detail with no stability promise).
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The IR after simplification, in the text form.
    pub fn ir(&self) -> String {
        oxla_core::text::print(&self.program.function)
    }

    /// The fused kernels and the launches that run them.
    pub fn kernels(&self) -> String {
        self.program.text()
    }

    /// Cranelift IR of every kernel.
    pub fn clif(&self) -> String {
        self.program
            .kernels
            .iter()
            .map(|k| oxla_cpu::clif_text(k).unwrap_or_else(|e| format!("; {}: {e}\n", k.name)))
            .collect()
    }

    /// The PTX module for `sm_90`.
    pub fn ptx(&self) -> String {
        oxla_ptx::emit_module(&self.program.kernels, oxla_ptx::Arch::Sm90)
            .unwrap_or_else(|e| format!("// {e}\n"))
    }
}
