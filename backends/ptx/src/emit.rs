//! One kernel → one `.visible .entry`: parameters, index arithmetic, the
//! map loop and the reduction loop (the crate docs describe both; the
//! reduction loop and its summation order are in `reduce`).

use crate::func::{Class, Func};
use crate::launch::BLOCK;
use crate::ops;
use crate::values::{self, convert, Ty, Val};
use oxla_core::kernel::{InstKind, Kernel};
use oxla_core::Size;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;

mod reduce;
mod scan;

/// The text of the entry for `k` (already validated).
pub(crate) fn entry(k: &Kernel) -> String {
    let mut e = Emitter::new(k);
    if let Some(scan) = k.scan {
        e.scan(scan);
    } else if k.is_reduction() {
        e.reduction();
    } else {
        e.map();
    }
    let mut out = String::new();
    let mut params: Vec<String> = (0..k.args.len())
        .map(|i| format!("\t.param .u64 arg{i}"))
        .collect();
    params.extend((0..k.sizes.len()).map(|j| format!("\t.param .u64 size{j}")));
    let _ = writeln!(out, "// {}", k.body_text().lines().next().unwrap_or(""));
    let _ = writeln!(out, ".visible .entry {}(", k.name);
    let _ = writeln!(out, "{}", params.join(",\n"));
    let _ = writeln!(out, ")\n.maxntid {BLOCK}, 1, 1\n{{");
    out.push_str(&e.f.finish());
    out.push_str("}\n");
    out
}

/// A coordinate that is known to be zero is `None` (an axis of extent 1).
type Coord = Option<String>;

struct Emitter<'k> {
    k: &'k Kernel,
    f: Func,
    /// Global base address of each buffer.
    bases: Vec<String>,
    /// Size symbol values, in `k.sizes` order.
    size_regs: Vec<String>,
    /// Evaluated sizes: a register or an immediate.
    size_cache: HashMap<Size, String>,
    extents: Vec<String>,
    /// Per instruction, per axis: the load stride in elements (`None` = 0).
    strides: Vec<Vec<Option<String>>>,
    /// Per instruction: the value of a `Size` inst (computed at entry).
    size_vals: Vec<Option<Val>>,
    /// Per instruction: a load's element offset (a slice's start), if any.
    offsets: Vec<Option<String>>,
    /// A region store's element offset and per-axis strides (`None` = 0).
    region: Option<(Option<String>, Vec<Option<String>>)>,
    /// Per indexed load, and for a scatter store: the indexed axis's
    /// stride and length (u64 operands).
    indexed: Vec<Option<(String, String)>>,
    scatter: Option<(String, String)>,
    /// A scan kernel's state register (see `scan`).
    carry: Option<Val>,
}

impl<'k> Emitter<'k> {
    fn new(k: &'k Kernel) -> Emitter<'k> {
        let mut f = Func::new();
        let mut bases = Vec::new();
        for i in 0..k.args.len() {
            let r = f.reg(Class::B64);
            f.ins(format!("ld.param.u64 {r}, [arg{i}]"));
            f.ins(format!("cvta.to.global.u64 {r}, {r}"));
            bases.push(r);
        }
        let mut size_regs = Vec::new();
        for j in 0..k.sizes.len() {
            let r = f.reg(Class::B64);
            f.ins(format!("ld.param.u64 {r}, [size{j}]"));
            size_regs.push(r);
        }
        let mut e = Emitter {
            k,
            f,
            bases,
            size_regs,
            size_cache: HashMap::new(),
            extents: Vec::new(),
            strides: Vec::new(),
            size_vals: Vec::new(),
            offsets: Vec::new(),
            region: None,
            indexed: Vec::new(),
            scatter: None,
            carry: None,
        };
        // Extents and strides once, before any loop.
        e.extents = k.domain.iter().map(|d| e.size(d)).collect();
        for inst in &k.insts {
            let per_axis = match &inst.kind {
                InstKind::Load { strides, .. } | InstKind::LoadIndexed { strides, .. } => strides
                    .iter()
                    .map(|s| (!s.is_zero()).then(|| e.size(s)))
                    .collect(),
                _ => Vec::new(),
            };
            e.strides.push(per_axis);
            let indexed = match &inst.kind {
                InstKind::LoadIndexed { stride, bound, .. } => {
                    Some((e.size(stride), e.size(bound)))
                }
                _ => None,
            };
            e.indexed.push(indexed);
        }
        if let Some(sc) = k.region().and_then(|r| r.scatter.as_ref()) {
            e.scatter = Some((e.size(&sc.stride), e.size(&sc.bound)));
        }
        // Offsets and a region's strides once, before any loop.
        for inst in &k.insts {
            let o = match &inst.kind {
                InstKind::Load { offset, .. } | InstKind::LoadIndexed { offset, .. } => {
                    e.sum(offset)
                }
                _ => None,
            };
            e.offsets.push(o);
        }
        if let Some(r) = k.region() {
            let strides = r
                .strides
                .iter()
                .map(|s| (!s.is_zero()).then(|| e.size(s)))
                .collect();
            e.region = Some((e.sum(&r.offset), strides));
        }
        // `Size` values once, before any loop.
        for inst in &k.insts {
            let v = match &inst.kind {
                InstKind::Size(s) => {
                    let ty = Ty::of(inst.ty).expect("validated type");
                    let v = if s.is_zero() || s.syms.is_empty() {
                        ops::constant(&mut e.f, ty, s.factor as f64)
                    } else {
                        let n = e.size(s);
                        let d = e.f.reg(ty.class());
                        e.f.ins(format!("cvt.rn.{}.u64 {d}, {n}", ty.suffix()));
                        Val { ty, reg: d }
                    };
                    Some(values::round_to(&mut e.f, v, inst.ty))
                }
                _ => None,
            };
            e.size_vals.push(v);
        }
        e
    }

    /// The value of a size as a u64 operand.
    fn size(&mut self, s: &Size) -> String {
        if let Some(r) = self.size_cache.get(s) {
            return r.clone();
        }
        let v = if s.is_zero() || s.syms.is_empty() {
            s.factor.to_string()
        } else {
            let reg_of = |n: &String| {
                let i = self
                    .k
                    .sizes
                    .iter()
                    .position(|x| x == n)
                    .expect("validated symbol");
                self.size_regs[i].clone()
            };
            let d = self.f.reg(Class::B64);
            self.f.ins(format!("mov.u64 {d}, {}", reg_of(&s.syms[0])));
            for n in &s.syms[1..] {
                self.f.ins(format!("mul.lo.u64 {d}, {d}, {}", reg_of(n)));
            }
            if s.factor != 1 {
                self.f.ins(format!("mul.lo.u64 {d}, {d}, {}", s.factor));
            }
            d
        };
        self.size_cache.insert(s.clone(), v.clone());
        v
    }

    /// A sum of sizes as a u64 operand (`None` when it is 0).
    fn sum(&mut self, terms: &[Size]) -> Option<String> {
        let mut acc: Option<String> = None;
        for t in terms.iter().filter(|t| !t.is_zero()) {
            let v = self.size(t);
            acc = Some(match acc {
                None => v,
                Some(a) => {
                    let d = self.f.reg(Class::B64);
                    self.f.ins(format!("add.u64 {d}, {a}, {v}"));
                    d
                }
            });
        }
        acc
    }

    /// `offset + sum_k coords[k]·strides[k]` (`None` when it is 0).
    fn linear(
        &mut self,
        offset: Option<String>,
        coords: &[Coord],
        strides: &[Option<String>],
    ) -> Option<String> {
        let mut off = offset;
        for (c, s) in coords.iter().zip(strides) {
            let (Some(c), Some(s)) = (c, s) else { continue };
            off = Some(match (off, s.as_str()) {
                (None, "1") => c.clone(),
                (None, _) => {
                    let d = self.f.reg(Class::B64);
                    self.f.ins(format!("mul.lo.u64 {d}, {c}, {s}"));
                    d
                }
                (Some(o), _) => {
                    let d = self.f.reg(Class::B64);
                    self.f.ins(format!("mad.lo.u64 {d}, {c}, {s}, {o}"));
                    d
                }
            });
        }
        off
    }

    /// Product of the extents of `axes` as a u64 register.
    fn product(&mut self, axes: Range<usize>) -> String {
        let d = self.f.reg(Class::B64);
        self.f.ins(format!("mov.u64 {d}, 1"));
        for k in axes {
            self.f
                .ins(format!("mul.lo.u64 {d}, {d}, {}", self.extents[k]));
        }
        d
    }

    /// Row-major coordinates of the linear index `idx` over `axes`.
    fn decode(&mut self, idx: &str, axes: Range<usize>) -> Vec<Coord> {
        let mut coords = vec![None; axes.len()];
        let mut rem = idx.to_string();
        for k in axes.clone().rev() {
            let slot = k - axes.start;
            if k == axes.start {
                coords[slot] = Some(rem);
                break;
            }
            let ext = self.extents[k].clone();
            if ext == "1" {
                continue;
            }
            let q = self.f.reg(Class::B64);
            let c = self.f.reg(Class::B64);
            self.f.ins(format!("div.u64 {q}, {rem}, {ext}"));
            self.f.ins(format!("mul.lo.u64 {c}, {q}, {ext}"));
            self.f.ins(format!("sub.u64 {c}, {rem}, {c}"));
            coords[slot] = Some(c);
            rem = q;
        }
        coords
    }

    /// `base + index·elem_bytes`.
    fn address(&mut self, base: &str, index: Option<&str>, elem_bytes: usize) -> String {
        match index {
            None => base.to_string(),
            Some(i) => {
                let a = self.f.reg(Class::B64);
                self.f
                    .ins(format!("mad.lo.u64 {a}, {i}, {elem_bytes}, {base}"));
                a
            }
        }
    }

    /// `off + c·stride` as a u64 register, `c` the index value `i` (f64)
    /// wrapped once if negative (`i + bound`) and clamped into `0..bound`
    /// (`ops::gather::clamp_index`, JAX's indexing and gather default); a
    /// branch to `skip` when the axis is empty: the one place an
    /// address is computed from a value read from memory.
    fn indexed_position(
        &mut self,
        i: &Val,
        (stride, bound): (String, String),
        off: Option<String>,
        skip: &str,
    ) -> String {
        let (bu, bf, p) = (
            self.f.reg(Class::B64),
            self.f.reg(Class::F64),
            self.f.reg(Class::Pred),
        );
        self.f.ins(format!("mov.u64 {bu}, {bound}"));
        self.f.ins(format!("cvt.rn.f64.u64 {bf}, {bu}"));
        let zero = values::float_imm(Ty::F64, 0.0);
        let one = values::float_imm(Ty::F64, 1.0);
        // Wrap a negative index once (JAX: i + bound), then clamp into
        // 0..=bound-1 (the index is an integer, never NaN); for an empty
        // axis the result is 0, which the test rejects.
        let (last, c) = (self.f.reg(Class::F64), self.f.reg(Class::F64));
        let (w, neg) = (self.f.reg(Class::F64), self.f.reg(Class::Pred));
        self.f.ins(format!("setp.lt.f64 {neg}, {}, {zero}", i.reg));
        self.f.ins(format!("add.f64 {w}, {}, {bf}", i.reg));
        self.f.ins(format!("selp.f64 {w}, {w}, {}, {neg}", i.reg));
        self.f.ins(format!("sub.f64 {last}, {bf}, {one}"));
        self.f.ins(format!("min.f64 {c}, {w}, {last}"));
        self.f.ins(format!("max.f64 {c}, {c}, {zero}"));
        self.f.ins(format!("setp.lt.f64 {p}, {c}, {bf}"));
        self.f.ins(format!("@!{p} bra {skip}"));
        let (n, at) = (self.f.reg(Class::B64), self.f.reg(Class::B64));
        self.f.ins(format!("cvt.rzi.u64.f64 {n}, {c}"));
        let off = off.unwrap_or_else(|| "0".to_string());
        self.f.ins(format!("mad.lo.u64 {at}, {n}, {stride}, {off}"));
        at
    }

    /// Evaluate every instruction at `coords`.
    fn eval(&mut self, coords: &[Coord]) -> Vec<Val> {
        let mut vals: Vec<Val> = Vec::with_capacity(self.k.insts.len());
        for (i, inst) in self.k.insts.iter().enumerate() {
            self.f
                .comment(format!("v{i}: {} = {:?}", inst.ty, inst.kind));
            let ty = Ty::of(inst.ty).expect("validated type");
            let v = match &inst.kind {
                InstKind::Load { arg, .. } => {
                    let strides = self.strides[i].clone();
                    let off = self.linear(self.offsets[i].clone(), coords, &strides);
                    let dtype = self.k.args[*arg].dtype;
                    let base = self.bases[*arg].clone();
                    let addr = self.address(&base, off.as_deref(), dtype.size_bytes());
                    let v = values::load(&mut self.f, dtype, &addr);
                    let v = convert(&mut self.f, &v, ty);
                    if dtype == inst.ty {
                        v
                    } else {
                        values::round_to(&mut self.f, v, inst.ty)
                    }
                }
                InstKind::LoadIndexed { arg, index, .. } => {
                    // The element at the clamped index; 0 for an empty axis.
                    let d = self.f.reg(ty.class());
                    let zero = values::float_imm(ty, 0.0);
                    self.f.ins(format!("mov.{} {d}, {zero}", ty.suffix()));
                    let skip = self.f.new_label("gather_skip");
                    let strides = self.strides[i].clone();
                    let off = self.linear(self.offsets[i].clone(), coords, &strides);
                    let axis = self.indexed[i].clone().expect("computed at entry");
                    let at = self.indexed_position(&vals[*index], axis, off, &skip);
                    let dtype = self.k.args[*arg].dtype;
                    let base = self.bases[*arg].clone();
                    let addr = self.address(&base, Some(&at), dtype.size_bytes());
                    let v = values::load(&mut self.f, dtype, &addr);
                    let v = convert(&mut self.f, &v, ty);
                    let v = match dtype == inst.ty {
                        true => v,
                        false => values::round_to(&mut self.f, v, inst.ty),
                    };
                    self.f.ins(format!("mov.{} {d}, {}", ty.suffix(), v.reg));
                    self.f.place_label(&skip);
                    Val { ty, reg: d }
                }
                InstKind::Const(c) => ops::constant(&mut self.f, ty, inst.ty.round(*c)),
                InstKind::Unary(op, a) => {
                    let v = ops::unary(&mut self.f, *op, &vals[*a], ty);
                    values::round_to(&mut self.f, v, inst.ty)
                }
                InstKind::Binary(op, a, b) => {
                    let v = ops::binary(&mut self.f, *op, &vals[*a], &vals[*b], ty);
                    values::round_to(&mut self.f, v, inst.ty)
                }
                InstKind::Cmp(op, a, b) => {
                    let v = ops::cmp(&mut self.f, *op, &vals[*a], &vals[*b]);
                    convert(&mut self.f, &v, ty)
                }
                InstKind::Select(c, a, b) => {
                    ops::select(&mut self.f, &vals[*c], &vals[*a], &vals[*b], ty)
                }
                InstKind::Size(_) => self.size_vals[i].clone().expect("computed at entry"),
                InstKind::Carry => self.carry.clone().expect("a carry in a scan kernel"),
                InstKind::Index(axis) => {
                    let v = match &coords[*axis] {
                        None => ops::constant(&mut self.f, ty, 0.0),
                        Some(c) => {
                            let d = self.f.reg(ty.class());
                            self.f.ins(format!("cvt.rn.{}.u64 {d}, {c}", ty.suffix()));
                            Val { ty, reg: d }
                        }
                    };
                    values::round_to(&mut self.f, v, inst.ty)
                }
            };
            vals.push(v);
        }
        vals
    }

    /// Store `v` (of instruction type `value_ty`) at `index` of output `arg`.
    fn store(&mut self, arg: usize, index: &str, v: &Val) {
        let dtype = self.k.args[arg].dtype;
        let base = self.bases[arg].clone();
        let addr = self.address(&base, Some(index), dtype.size_bytes());
        values::store(&mut self.f, dtype, &addr, v);
    }

    /// `%ctaid.x·%ntid.x + %tid.x` and `%nctaid.x·%ntid.x` as u64.
    fn global_thread(&mut self) -> (String, String) {
        let (cta, ntid, tid, ncta) = (
            self.f.reg(Class::B32),
            self.f.reg(Class::B32),
            self.f.reg(Class::B32),
            self.f.reg(Class::B32),
        );
        self.f.ins(format!("mov.u32 {cta}, %ctaid.x"));
        self.f.ins(format!("mov.u32 {ntid}, %ntid.x"));
        self.f.ins(format!("mov.u32 {tid}, %tid.x"));
        self.f.ins(format!("mov.u32 {ncta}, %nctaid.x"));
        let idx = self.f.reg(Class::B64);
        let step = self.f.reg(Class::B64);
        let t = self.f.reg(Class::B64);
        self.f.ins(format!("mul.wide.u32 {idx}, {cta}, {ntid}"));
        self.f.ins(format!("cvt.u64.u32 {t}, {tid}"));
        self.f.ins(format!("add.u64 {idx}, {idx}, {t}"));
        self.f.ins(format!("mul.wide.u32 {step}, {ncta}, {ntid}"));
        (idx, step)
    }

    /// Map: a grid-stride loop over the flattened iteration index, storing
    /// each value at that index.
    fn map(&mut self) {
        let rank = self.k.domain.len();
        let total = self.product(0..rank);
        let (idx, step) = self.global_thread();
        let (top, end) = (self.f.new_label("map"), self.f.new_label("done"));
        let p = self.f.reg(Class::Pred);
        self.f.place_label(&top);
        self.f.ins(format!("setp.ge.u64 {p}, {idx}, {total}"));
        self.f.ins(format!("@{p} bra {end}"));
        let coords = self.decode(&idx, 0..rank);
        let vals = self.eval(&coords);
        // A region store writes at its own offset and strides.
        let at = match self.region.clone() {
            None => idx.clone(),
            Some((offset, strides)) => self
                .linear(offset, &coords, &strides)
                .unwrap_or_else(|| "0".to_string()),
        };
        let at = match at.parse::<u64>() {
            Ok(_) => {
                let d = self.f.reg(Class::B64);
                self.f.ins(format!("mov.u64 {d}, {at}"));
                d
            }
            Err(_) => at,
        };
        for st in &self.k.stores {
            match (
                self.scatter.clone(),
                self.k.region().and_then(|r| r.scatter.as_ref()),
            ) {
                (Some(axis), Some(sc)) => {
                    // Atomic: iterations adding to one element run in no
                    // fixed order (the sum's rounding may differ per run).
                    let skip = self.f.new_label("scatter_skip");
                    let at = self.indexed_position(&vals[sc.index], axis, Some(at.clone()), &skip);
                    let dtype = self.k.args[st.arg].dtype;
                    let t = Ty::of(dtype).expect("validated: f32 or f64");
                    let base = self.bases[st.arg].clone();
                    let addr = self.address(&base, Some(&at), dtype.size_bytes());
                    let v = convert(&mut self.f, &vals[st.value], t);
                    let old = self.f.reg(t.class());
                    self.f.ins(format!(
                        "atom.global.add.{} {old}, [{addr}], {}",
                        t.suffix(),
                        v.reg
                    ));
                    self.f.place_label(&skip);
                }
                _ => self.store(st.arg, &at, &vals[st.value]),
            }
        }
        self.f.ins(format!("add.u64 {idx}, {idx}, {step}"));
        self.f.ins(format!("bra {top}"));
        self.f.place_label(&end);
        self.f.ins("ret");
    }
}
