//! One broken kernel per invariant of `Kernel::verify`, each rejected with
//! the error that names it; and the well-formed kernels they start from
//! pass.

use crate::dtype::DType::{self, Bool, F32, F64, I64};
use crate::kernel::{Inst, InstKind, Kernel, KernelArg, Reduce, Region, Scan, Scatter, Store};
use crate::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use crate::shape::{Dim, Size};

fn n() -> Size {
    Size::of(&Dim::sym("n"))
}

fn one() -> Size {
    Size::one()
}

fn inst(ty: DType, kind: InstKind) -> Inst {
    Inst { ty, kind }
}

fn load(ty: DType, arg: usize, strides: Vec<Size>) -> Inst {
    inst(
        ty,
        InstKind::Load {
            arg,
            strides,
            offset: Vec::new(),
        },
    )
}

fn arg(dtype: DType, output: bool) -> KernelArg {
    KernelArg { dtype, output }
}

/// A map over `[n]`: `x·2` where `x < 2`, else `x`, into a2; a1 holds
/// integer indices (v3, loaded as f64).
fn map() -> Kernel {
    Kernel {
        name: "map".into(),
        args: vec![arg(F32, false), arg(I64, false), arg(F32, true)],
        sizes: vec!["n".into()],
        domain: vec![n()],
        reduce_dims: 0,
        reduce: Reduce::Sum,
        insts: vec![
            load(F32, 0, vec![one()]),
            inst(F32, InstKind::Const(2.0)),
            inst(F32, InstKind::Binary(BinaryOp::Mul, 0, 1)),
            load(F64, 1, vec![one()]),
            inst(Bool, InstKind::Cmp(CmpOp::Lt, 0, 1)),
            inst(F32, InstKind::Select(4, 2, 0)),
        ],
        stores: vec![Store {
            arg: 2,
            value: 5,
            region: None,
        }],
        scan: None,
    }
}

/// `map` with its store a scatter-add at the index v3 along an axis of
/// `n` elements of stride 1.
fn scatter() -> Kernel {
    let mut k = map();
    k.stores[0].region = Some(Region {
        offset: Vec::new(),
        strides: vec![Size::zero()],
        scatter: Some(Scatter {
            index: 3,
            stride: one(),
            bound: n(),
        }),
    });
    k
}

/// The sum over `[n, 3]`'s last axis of `exp(x)`.
fn reduction() -> Kernel {
    Kernel {
        name: "sum".into(),
        args: vec![arg(F64, false), arg(F64, true)],
        sizes: vec!["n".into()],
        domain: vec![n(), Size::constant(3)],
        reduce_dims: 1,
        reduce: Reduce::Sum,
        insts: vec![
            load(F64, 0, vec![Size::constant(3), one()]),
            inst(F64, InstKind::Unary(UnaryOp::Exp, 0)),
        ],
        stores: vec![Store {
            arg: 1,
            value: 1,
            region: None,
        }],
        scan: None,
    }
}

/// The running sum of `x` along `[n]`.
fn scan() -> Kernel {
    Kernel {
        name: "cumsum".into(),
        args: vec![arg(F32, false), arg(F32, true)],
        sizes: vec!["n".into()],
        domain: vec![n()],
        reduce_dims: 0,
        reduce: Reduce::Sum,
        insts: vec![
            load(F32, 0, vec![one()]),
            inst(F32, InstKind::Carry),
            inst(F32, InstKind::Binary(BinaryOp::Add, 1, 0)),
        ],
        stores: vec![Store {
            arg: 1,
            value: 2,
            region: None,
        }],
        scan: Some(Scan {
            axis: 0,
            reverse: false,
            next: 2,
        }),
    }
}

/// `k`'s error, which must name the kernel and contain `want`.
#[track_caller]
fn rejects(k: Kernel, want: &str) {
    let e = k.verify().expect_err(want);
    assert!(e.starts_with(&format!("kernel `{}`: ", k.name)), "{e}");
    assert!(e.contains(want), "expected `{want}` in: {e}");
}

#[test]
fn well_formed_kernels_pass() {
    for k in [map(), scatter(), reduction(), scan()] {
        k.verify().unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn header() {
    let mut k = map();
    k.sizes.push("n".into());
    rejects(k, "size symbol `n` appears twice");
    let mut k = map();
    k.args.swap(1, 2);
    k.stores[0].arg = 1;
    rejects(k, "input a2 follows output a1");
    let mut k = map();
    k.domain = vec![Size::of(&Dim::sym("m"))];
    rejects(k, "the domain names size symbol `m`");
    let mut k = reduction();
    k.reduce_dims = 3;
    rejects(k, "reduce_dims 3 exceeds the domain's rank 2");
    let mut k = map();
    k.reduce = Reduce::Max;
    rejects(k, "a map kernel with combiner max");
}

#[test]
fn operands_are_defined_before_use() {
    let mut k = map();
    k.insts[2].kind = InstKind::Binary(BinaryOp::Mul, 0, 2);
    rejects(k, "v2: uses v2, which is not defined before it");
    let mut k = map();
    k.insts[5].kind = InstKind::Select(9, 2, 0);
    rejects(k, "v5: uses v9");
    let mut k = map();
    k.insts[0].kind = InstKind::Unary(UnaryOp::Neg, 1);
    rejects(k, "v0: uses v1");
}

#[test]
fn types_per_instruction() {
    let mut k = map();
    k.insts[1].ty = I64;
    rejects(k, "v1: type i64 is not a compute type");
    let mut k = map();
    k.insts[1].ty = DType::I32;
    rejects(k, "v1: type i32 is not a compute type");
    let mut k = map();
    k.insts[2].ty = Bool;
    rejects(k, "v2: arithmetic (mul) of type bool");
    let mut k = reduction();
    k.insts[1].ty = Bool;
    rejects(k, "v1: arithmetic (exp) of type bool");
    let mut k = map();
    k.insts[4].ty = F32;
    rejects(k, "v4: comparison (lt) of type f32");
    let mut k = map();
    k.insts[1] = inst(Bool, InstKind::Size(n()));
    rejects(k, "v1: a size of type bool");
    let mut k = map();
    k.insts[1] = inst(Bool, InstKind::Index(0));
    rejects(k, "v1: an index of type bool");
    // Loads and selects convert: any compute type is fine, half types
    // (values rounded to them) too.
    let mut k = map();
    k.insts[0].ty = Bool;
    k.insts[5].ty = F64;
    k.verify().unwrap();
    let mut k = map();
    k.insts[1].ty = DType::F16;
    k.insts[2].ty = DType::BF16;
    k.verify().unwrap();
}

#[test]
fn loads_read_inputs_with_one_stride_per_axis() {
    let mut k = map();
    k.insts[0] = load(F32, 2, vec![one()]);
    rejects(k, "v0: loads a2, which is an output");
    let mut k = map();
    k.insts[0] = load(F32, 7, vec![one()]);
    rejects(k, "v0: loads a7, past the 3 args");
    let mut k = map();
    k.insts[0] = load(F32, 0, vec![]);
    rejects(k, "v0: 0 load strides for a domain of rank 1");
    let mut k = map();
    k.insts[0] = load(F32, 0, vec![Size::of(&Dim::sym("m"))]);
    rejects(k, "v0: the load's strides or offset names size symbol `m`");
    let mut k = map();
    k.insts[0].kind = InstKind::Load {
        arg: 0,
        strides: vec![one()],
        offset: vec![Size::of(&Dim::sym("q"))],
    };
    rejects(k, "names size symbol `q`");
}

#[test]
fn sizes_and_indices_are_in_range() {
    let mut k = map();
    k.insts[1] = inst(F32, InstKind::Size(Size::of(&Dim::sym("m"))));
    rejects(k, "v1: the size names size symbol `m`");
    let mut k = map();
    k.insts[1] = inst(F32, InstKind::Index(1));
    rejects(k, "v1: index of axis 1, past the domain's rank 1");
    let mut k = map();
    k.insts[1] = inst(F64, InstKind::Size(n()));
    k.insts[3] = inst(F64, InstKind::Index(0));
    k.verify().unwrap();
}

/// `x[i]` over `[n]`: v0 loads x (a0), v1 the indices i (a1, as f64), v2
/// gathers x at the index `index`.
fn gather(index: usize, ty: DType, bound: Size) -> Kernel {
    let mut k = map();
    k.insts = vec![
        load(F32, 0, vec![one()]),
        load(F64, 1, vec![one()]),
        inst(
            ty,
            InstKind::LoadIndexed {
                arg: 0,
                strides: vec![Size::zero()],
                offset: Vec::new(),
                index,
                stride: one(),
                bound,
            },
        ),
    ];
    k.stores[0].value = 2;
    k
}

#[test]
fn gathers() {
    gather(1, F32, n()).verify().unwrap();
    rejects(
        gather(0, F32, n()),
        "v2: the index v0 is not a plain load of an integer input",
    );
    rejects(
        gather(2, F32, n()),
        "v2: uses v2, which is not defined before it",
    );
    rejects(gather(1, Bool, n()), "v2: a gather of type bool");
    let m = Size::of(&Dim::sym("m"));
    rejects(
        gather(1, F32, m),
        "v2: the gather's stride and bound names size symbol `m`",
    );
    // The index is loaded as f64 from an integer input.
    let mut k = gather(1, F32, n());
    k.insts[1].ty = F32;
    rejects(k, "v2: the index v1 is not a plain load");
    let mut k = gather(1, F32, n());
    k.args[1].dtype = F64;
    rejects(k, "v2: the index v1 is not a plain load");
    let mut k = gather(1, F32, n());
    k.insts[2].kind = InstKind::LoadIndexed {
        arg: 2,
        strides: vec![Size::zero()],
        offset: Vec::new(),
        index: 1,
        stride: one(),
        bound: n(),
    };
    rejects(k, "v2: loads a2, which is an output");
}

#[test]
fn scans() {
    let mut k = map();
    k.insts[1] = inst(F32, InstKind::Carry);
    rejects(k, "v1: a carry outside a scan kernel");
    let mut k = scan();
    k.scan.as_mut().unwrap().axis = 1;
    rejects(k, "scan axis 1 past the domain's rank 1");
    let mut k = scan();
    k.scan.as_mut().unwrap().next = 3;
    rejects(k, "the scan's next state v3 is undefined");
    let mut k = scan();
    k.insts.push(inst(Bool, InstKind::Cmp(CmpOp::Lt, 0, 2)));
    k.scan.as_mut().unwrap().next = 3;
    rejects(k, "the scan's state v3 is bool");
    let mut k = scan();
    k.insts[1].ty = F64;
    rejects(k, "v1: a carry of type f64, but the scan's state v2 is f32");
    let mut k = scan();
    k.domain.push(one());
    k.insts[0] = load(F32, 0, vec![one(), one()]);
    k.reduce_dims = 1;
    rejects(k, "a scan kernel reducing 1 axes");
    let mut k = scan();
    k.stores[0].region = Some(Region {
        offset: Vec::new(),
        strides: vec![one()],
        scatter: None,
    });
    rejects(k, "a scan kernel storing into a region");
}

#[test]
fn stores() {
    let mut k = map();
    k.stores[0].arg = 0;
    rejects(k, "store 0: writes a0, which is an input");
    let mut k = map();
    k.stores[0].arg = 5;
    rejects(k, "store 0: writes a5, past the 3 args");
    let mut k = map();
    k.stores[0].value = 6;
    rejects(k, "store 0: stores v6, which is undefined");
    let mut k = map();
    k.stores.push(k.stores[0].clone());
    rejects(k, "stores 0 and 1 both write a2");
    let mut k = map();
    k.args.push(arg(F64, true));
    rejects(k, "output a3 is written by no store");
    // Two outputs, two regions.
    let mut k = map();
    k.args.push(arg(F64, true));
    k.stores.push(Store {
        arg: 3,
        value: 2,
        region: Some(Region {
            offset: Vec::new(),
            strides: vec![one()],
            scatter: None,
        }),
    });
    rejects(k, "stores 0 and 1 write different regions");
    let mut k = reduction();
    k.insts.push(inst(Bool, InstKind::Cmp(CmpOp::Lt, 0, 1)));
    k.stores[0].value = 2;
    rejects(k, "store 0: a reduction (sum) of bool value v2");
}

#[test]
fn regions_and_scatters() {
    let region = |strides: Vec<Size>, offset: Vec<Size>| Region {
        offset,
        strides,
        scatter: None,
    };
    let mut k = map();
    k.stores[0].region = Some(region(vec![Size::constant(2)], vec![one()]));
    k.verify().unwrap();
    let mut k = map();
    k.stores[0].region = Some(region(vec![], vec![]));
    rejects(k, "store 0: 0 region strides for a domain of rank 1");
    let mut k = map();
    k.stores[0].region = Some(region(vec![one()], vec![Size::of(&Dim::sym("m"))]));
    rejects(k, "store 0: the region names size symbol `m`");
    let mut k = reduction();
    k.stores[0].region = Some(region(vec![one(), one()], vec![]));
    rejects(k, "store 0: a region store in a reduction kernel");
    let mut k = scatter();
    k.stores[0]
        .region
        .as_mut()
        .unwrap()
        .scatter
        .as_mut()
        .unwrap()
        .index = 0;
    rejects(k, "store 0: the index v0 is not a plain load");
    let mut k = scatter();
    let sc = k.stores[0]
        .region
        .as_mut()
        .unwrap()
        .scatter
        .as_mut()
        .unwrap();
    sc.bound = Size::of(&Dim::sym("m"));
    rejects(
        k,
        "store 0: the scatter's stride and bound names size symbol `m`",
    );
    let mut k = scatter();
    k.stores[0].value = 4;
    rejects(k, "store 0: a scatter-add of bool value v4");
}

/// `check_call`, which the interpreter runs before reading a buffer,
/// rejects a malformed kernel with the verifier's error.
#[test]
fn check_call_verifies() {
    let mut k = map();
    k.insts[2].kind = InstKind::Binary(BinaryOp::Mul, 0, 4 + 1);
    let bufs = [(F32, 3), (I64, 3), (F32, 3)].into_iter();
    let e = k.check_call(bufs, &[3]).unwrap_err();
    assert!(e.contains("kernel `map`: v2: uses v5"), "{e}");
}
