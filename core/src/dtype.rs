//! Element types.

use std::fmt;

/// The element type of a tensor.
///
/// `F16` and `BF16` are storage types: the interpreter rounds to them after
/// every op, and kernels load them as `f32`, compute in `f32` and round on store.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum DType {
    /// IEEE half precision (`half::f16`).
    F16,
    /// bfloat16 (`half::bf16`).
    BF16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `bool`, one byte (0 or 1).
    Bool,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
}

impl DType {
    /// Every element type.
    pub const ALL: [DType; 7] = [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::Bool,
        DType::I32,
        DType::I64,
    ];

    /// The Rust name of the type (`f32`, `bf16`, `bool`, …), as the IR's
    /// text form writes it.
    pub fn name(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::Bool => "bool",
            DType::I32 => "i32",
            DType::I64 => "i64",
        }
    }

    /// The type named `s` (see [`DType::name`]).
    pub fn parse(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == s)
    }

    /// Whether the type is a float type (f16, bf16, f32 or f64).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// Bytes one element takes in memory (`bool` is one byte, 0 or 1).
    pub fn size_bytes(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::F16 | DType::BF16 => 2,
            DType::F32 | DType::I32 => 4,
            DType::F64 | DType::I64 => 8,
        }
    }

    /// The type arithmetic happens in inside a kernel: half types widen to `f32`.
    pub fn compute_type(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            d => d,
        }
    }

    /// Round an `f64` to the nearest value representable in this type. Half
    /// types round through `f32`, the type kernels compute them in.
    pub fn round(self, v: f64) -> f64 {
        match self {
            DType::F64 => v,
            DType::F32 => v as f32 as f64,
            DType::F16 => half::f16::from_f32(v as f32).to_f64(),
            DType::BF16 => half::bf16::from_f32(v as f32).to_f64(),
            DType::Bool => {
                if v != 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            DType::I32 => (v as i32) as f64,
            DType::I64 => (v as i64) as f64,
        }
    }

    /// Machine epsilon of a float type (distance from 1.0 to the next value).
    pub fn epsilon(self) -> f64 {
        match self {
            DType::F16 => half::f16::EPSILON.to_f64(),
            DType::BF16 => half::bf16::EPSILON.to_f64(),
            DType::F32 => f32::EPSILON as f64,
            _ => f64::EPSILON,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
