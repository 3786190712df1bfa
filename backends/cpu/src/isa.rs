//! Target ISAs: the host's (for the JIT) and the three x86-64 levels the
//! build helper compiles every kernel at (for object files).

use cranelift_codegen::isa::{self, OwnedTargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use target_lexicon::{Architecture, Triple};

/// An x86-64 feature level to compile object code for.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum IsaLevel {
    /// `x86-64-v4`: AVX-512 (F, BW, CD, DQ, VL) on top of v3. Native kernels
    /// use its 512-bit vectors; Cranelift, which has 128-bit vectors only,
    /// compiles the kernels native code does not cover as for v3.
    X86_64V4,
    /// `x86-64-v3`: AVX2 and FMA (Haswell and later).
    X86_64V3,
    /// SSE2 only: every x86-64 CPU.
    Baseline,
}

impl IsaLevel {
    pub const ALL: [IsaLevel; 3] = [IsaLevel::X86_64V4, IsaLevel::X86_64V3, IsaLevel::Baseline];

    /// Suffix of the exported symbol names.
    pub fn suffix(self) -> &'static str {
        match self {
            IsaLevel::X86_64V4 => "v4",
            IsaLevel::X86_64V3 => "v3",
            IsaLevel::Baseline => "base",
        }
    }
}

/// Whether the running CPU can execute `IsaLevel::X86_64V3` code.
pub fn host_supports_v3() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma")
            && is_x86_feature_detected!("bmi1")
            && is_x86_feature_detected!("bmi2")
            && is_x86_feature_detected!("lzcnt")
            && is_x86_feature_detected!("movbe")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the running CPU can execute `IsaLevel::X86_64V4` code.
pub fn host_supports_v4() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        host_supports_v3()
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512cd")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the running CPU can execute code of `level`.
pub fn host_supports(level: IsaLevel) -> bool {
    match level {
        IsaLevel::X86_64V4 => host_supports_v4(),
        IsaLevel::X86_64V3 => host_supports_v3(),
        IsaLevel::Baseline => true,
    }
}

/// The best level the running CPU supports.
pub fn host_level() -> IsaLevel {
    IsaLevel::ALL
        .into_iter()
        .find(|l| host_supports(*l))
        .unwrap_or(IsaLevel::Baseline)
}

/// Code-generation flags: optimise for speed, no unwind tables, and
/// position-independent code for object files (required to link into a PIE;
/// cranelift-jit wants it off).
fn flags(pic: bool) -> Result<settings::Flags, String> {
    let mut b = settings::builder();
    let pic = if pic { "true" } else { "false" };
    for (name, value) in [
        ("opt_level", "speed"),
        ("is_pic", pic),
        ("unwind_info", "false"),
    ] {
        b.set(name, value)
            .map_err(|e| format!("cranelift setting {name}: {e}"))?;
    }
    Ok(settings::Flags::new(b))
}

/// The ISA of the machine we run on, with every feature it has.
pub fn host_isa(pic: bool) -> Result<OwnedTargetIsa, String> {
    let builder = cranelift_native::builder().map_err(|e| format!("host ISA: {e}"))?;
    builder
        .finish(flags(pic)?)
        .map_err(|e| format!("host ISA: {e}"))
}

/// The ISA for `level`. Object files target the host triple; on a host that is
/// not x86-64 only `Baseline` exists and means the host's default features.
pub fn level_isa(level: IsaLevel, pic: bool) -> Result<OwnedTargetIsa, String> {
    let triple = Triple::host();
    let is_x86_64 = matches!(triple.architecture, Architecture::X86_64);
    let mut builder = isa::lookup(triple).map_err(|e| format!("ISA lookup: {e}"))?;
    match level {
        IsaLevel::X86_64V3 | IsaLevel::X86_64V4 if !is_x86_64 => {
            return Err(format!("the {level:?} level needs an x86_64 target"));
        }
        IsaLevel::X86_64V3 | IsaLevel::X86_64V4 => {
            // Cranelift's `x86-64-v3` preset sets `has_avx2` and `has_fma`
            // but not `has_avx`, which gates every VEX encoding (and `fma`
            // as one instruction): set it too, as the level implies.
            for setting in ["x86-64-v3", "has_avx"] {
                builder
                    .enable(setting)
                    .map_err(|e| format!("x86-64-v3: {setting}: {e}"))?;
            }
        }
        IsaLevel::Baseline => {}
    }
    builder
        .finish(flags(pic)?)
        .map_err(|e| format!("ISA {level:?}: {e}"))
}

fn isa_flag(isa: &dyn isa::TargetIsa, name: &str) -> bool {
    isa.isa_flags()
        .iter()
        .any(|v| v.name == name && v.as_bool() == Some(true))
}

/// Whether `fma` compiles to one instruction (not a libcall) on this ISA.
pub fn has_native_fma(isa: &dyn isa::TargetIsa) -> bool {
    isa.triple().architecture == Architecture::X86_64
        && isa_flag(isa, "has_avx")
        && isa_flag(isa, "has_fma")
}

/// Whether this is x86-64 without AVX: vector instructions are legacy SSE,
/// whose 128-bit memory operands must be 16-byte aligned.
pub fn is_sse_only(isa: &dyn isa::TargetIsa) -> bool {
    isa.triple().architecture == Architecture::X86_64 && !isa_flag(isa, "has_avx")
}
