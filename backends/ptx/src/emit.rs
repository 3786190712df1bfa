//! One kernel → one `.visible .entry`: parameters, index arithmetic, the
//! map loop and the reduction loop (the crate docs describe both).

use crate::func::{Class, Func};
use crate::launch::{uses_atomics, BLOCK, MIN_CHUNK, WARPS};
use crate::ops;
use crate::values::{self, convert, Ty, Val};
use oxla_core::kernel::{InstKind, Kernel};
use oxla_core::Size;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;

/// The text of the entry for `k` (already validated).
pub(crate) fn entry(k: &Kernel) -> String {
    let mut e = Emitter::new(k);
    if k.is_reduction() {
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
        };
        // Extents and strides once, before any loop.
        e.extents = k.domain.iter().map(|d| e.size(d)).collect();
        for inst in &k.insts {
            let per_axis = match &inst.kind {
                InstKind::Load { strides, .. } => strides
                    .iter()
                    .map(|s| (!s.is_zero()).then(|| e.size(s)))
                    .collect(),
                _ => Vec::new(),
            };
            e.strides.push(per_axis);
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

    /// Evaluate every instruction at `coords`.
    fn eval(&mut self, coords: &[Coord]) -> Vec<Val> {
        let mut vals: Vec<Val> = Vec::with_capacity(self.k.insts.len());
        for (i, inst) in self.k.insts.iter().enumerate() {
            self.f
                .comment(format!("v{i}: {} = {:?}", inst.ty, inst.kind));
            let ty = Ty::of(inst.ty).expect("validated type");
            let v = match &inst.kind {
                InstKind::Load { arg, .. } => {
                    let mut off: Option<String> = None;
                    for (c, s) in coords.iter().zip(self.strides[i].clone()) {
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
        for st in &self.k.stores {
            self.store(st.arg, &idx, &vals[st.value]);
        }
        self.f.ins(format!("add.u64 {idx}, {idx}, {step}"));
        self.f.ins(format!("bra {top}"));
        self.f.place_label(&end);
        self.f.ins("ret");
    }

    /// Reduction: work units are (outer index, chunk of the reduced index
    /// range); each block takes units in a grid-stride loop, its threads sum
    /// their elements of the chunk, the block combines them with warp
    /// shuffles and shared memory, and thread 0 adds the result atomically
    /// into the zeroed output (or stores it, when the chunk is everything).
    fn reduction(&mut self) {
        let k = self.k;
        let (outer, rank) = (k.outer_dims(), k.domain.len());
        let atomics = uses_atomics(k);
        let n_out = self.product(0..outer);
        let n_in = self.product(outer..rank);
        let end = self.f.new_label("done");
        let p = self.f.reg(Class::Pred);
        // Nothing to add: the host's zeros are the answer.
        self.f.ins(format!("setp.eq.u64 {p}, {n_out}, 0"));
        self.f.ins(format!("@{p} bra {end}"));
        self.f.ins(format!("setp.eq.u64 {p}, {n_in}, 0"));
        self.f.ins(format!("@{p} bra {end}"));

        let smem_bytes = (k.stores.len().max(1) as u32) * WARPS * 8;
        self.f
            .decl(format!(".shared .align 8 .b8 red_smem[{smem_bytes}];"));
        let (tid, lane, warp, ncta) = (
            self.f.reg(Class::B32),
            self.f.reg(Class::B32),
            self.f.reg(Class::B32),
            self.f.reg(Class::B32),
        );
        self.f.ins(format!("mov.u32 {tid}, %tid.x"));
        self.f.ins(format!("and.b32 {lane}, {tid}, 31"));
        self.f.ins(format!("shr.u32 {warp}, {tid}, 5"));
        self.f.ins(format!("mov.u32 {ncta}, %nctaid.x"));

        // chunks = clamp(min(⌈n_in/MIN_CHUNK⌉, ⌈grid/n_out⌉), 1, ..):
        // split the reduced range only as far as it fills the grid.
        let chunks = self.f.reg(Class::B64);
        if atomics {
            let t = self.f.reg(Class::B64);
            self.f
                .ins(format!("add.u64 {chunks}, {n_in}, {}", MIN_CHUNK - 1));
            self.f
                .ins(format!("div.u64 {chunks}, {chunks}, {MIN_CHUNK}"));
            self.f.ins(format!("cvt.u64.u32 {t}, {ncta}"));
            self.f.ins(format!("add.u64 {t}, {t}, {n_out}"));
            self.f.ins(format!("sub.u64 {t}, {t}, 1"));
            self.f.ins(format!("div.u64 {t}, {t}, {n_out}"));
            self.f.ins(format!("min.u64 {chunks}, {chunks}, {t}"));
            self.f.ins(format!("max.u64 {chunks}, {chunks}, 1"));
        } else {
            self.f.ins(format!("mov.u64 {chunks}, 1"));
        }
        let chunk_len = self.f.reg(Class::B64);
        self.f.ins(format!("add.u64 {chunk_len}, {n_in}, {chunks}"));
        self.f.ins(format!("sub.u64 {chunk_len}, {chunk_len}, 1"));
        self.f
            .ins(format!("div.u64 {chunk_len}, {chunk_len}, {chunks}"));
        let units = self.f.reg(Class::B64);
        self.f.ins(format!("mul.lo.u64 {units}, {n_out}, {chunks}"));
        let unit = self.f.reg(Class::B64);
        let step = self.f.reg(Class::B64);
        let tid64 = self.f.reg(Class::B64);
        self.f.ins(format!("mov.u32 {tid}, %tid.x"));
        self.f.ins(format!("cvt.u64.u32 {tid64}, {tid}"));
        let cta = self.f.reg(Class::B32);
        self.f.ins(format!("mov.u32 {cta}, %ctaid.x"));
        self.f.ins(format!("cvt.u64.u32 {unit}, {cta}"));
        self.f.ins(format!("cvt.u64.u32 {step}, {ncta}"));

        let unit_top = self.f.new_label("unit");
        self.f.place_label(&unit_top);
        self.f.ins(format!("setp.ge.u64 {p}, {unit}, {units}"));
        self.f.ins(format!("@{p} bra {end}"));
        let (o, c) = (self.f.reg(Class::B64), self.f.reg(Class::B64));
        self.f.ins(format!("div.u64 {o}, {unit}, {chunks}"));
        self.f.ins(format!("mul.lo.u64 {c}, {o}, {chunks}"));
        self.f.ins(format!("sub.u64 {c}, {unit}, {c}"));
        let (begin, stop) = (self.f.reg(Class::B64), self.f.reg(Class::B64));
        self.f.ins(format!("mul.lo.u64 {begin}, {c}, {chunk_len}"));
        self.f.ins(format!("add.u64 {stop}, {begin}, {chunk_len}"));
        self.f.ins(format!("min.u64 {stop}, {stop}, {n_in}"));
        let outer_coords = self.decode(&o, 0..outer);

        // Accumulators: in the value's compute type; bools count in f32.
        let acc_tys: Vec<Ty> = k
            .stores
            .iter()
            .map(
                |s| match Ty::of(k.insts[s.value].ty).expect("validated type") {
                    Ty::Pred => Ty::F32,
                    t => t,
                },
            )
            .collect();
        let accs: Vec<String> = acc_tys
            .iter()
            .map(|t| {
                let a = self.f.reg(t.class());
                self.f.ins(format!(
                    "mov.{} {a}, {}",
                    t.suffix(),
                    values::float_imm(*t, 0.0)
                ));
                a
            })
            .collect();
        let r = self.f.reg(Class::B64);
        self.f.ins(format!("add.u64 {r}, {begin}, {tid64}"));
        // Four elements per trip while they last (independent loads in
        // flight), then one at a time.
        let (wide_top, inner_top, inner_end) = (
            self.f.new_label("inner4"),
            self.f.new_label("inner"),
            self.f.new_label("inner_done"),
        );
        let last = self.f.reg(Class::B64);
        self.f.place_label(&wide_top);
        self.f.ins(format!("add.u64 {last}, {r}, {}", 3 * BLOCK));
        self.f.ins(format!("setp.ge.u64 {p}, {last}, {stop}"));
        self.f.ins(format!("@{p} bra {inner_top}"));
        for u in 0..4 {
            let ru = if u == 0 {
                r.clone()
            } else {
                let d = self.f.reg(Class::B64);
                self.f.ins(format!("add.u64 {d}, {r}, {}", u * BLOCK));
                d
            };
            self.accumulate(&ru, &outer_coords, &accs, &acc_tys);
        }
        self.f.ins(format!("add.u64 {r}, {r}, {}", 4 * BLOCK));
        self.f.ins(format!("bra {wide_top}"));
        self.f.place_label(&inner_top);
        self.f.ins(format!("setp.ge.u64 {p}, {r}, {stop}"));
        self.f.ins(format!("@{p} bra {inner_end}"));
        self.accumulate(&r, &outer_coords, &accs, &acc_tys);
        self.f.ins(format!("add.u64 {r}, {r}, {BLOCK}"));
        self.f.ins(format!("bra {inner_top}"));
        self.f.place_label(&inner_end);

        // Block sum: shuffle within warps, lane 0s to shared, warp 0 again.
        let smem = self.f.reg(Class::B32);
        self.f.ins(format!("mov.u32 {smem}, red_smem"));
        let lane0 = self.f.reg(Class::Pred);
        self.f.ins(format!("setp.eq.u32 {lane0}, {lane}, 0"));
        for (s, acc) in accs.iter().enumerate() {
            self.warp_sum(acc, acc_tys[s]);
            let a = self.f.reg(Class::B32);
            self.f
                .ins(format!("add.u32 {a}, {warp}, {}", s as u32 * WARPS));
            self.f.ins(format!("mad.lo.u32 {a}, {a}, 8, {smem}"));
            self.f.ins(format!(
                "@{lane0} st.shared.{} [{a}], {acc}",
                acc_tys[s].suffix()
            ));
        }
        self.f.ins("bar.sync 0");
        let first = self.f.reg(Class::Pred);
        self.f.ins(format!("setp.lt.u32 {first}, {tid}, {WARPS}"));
        let mut totals = Vec::new();
        for (s, t) in acc_tys.iter().enumerate() {
            let v = self.f.reg(t.class());
            let a = self.f.reg(Class::B32);
            self.f.ins(format!(
                "mov.{} {v}, {}",
                t.suffix(),
                values::float_imm(*t, 0.0)
            ));
            self.f
                .ins(format!("add.u32 {a}, {tid}, {}", s as u32 * WARPS));
            self.f.ins(format!("mad.lo.u32 {a}, {a}, 8, {smem}"));
            self.f
                .ins(format!("@{first} ld.shared.{} {v}, [{a}]", t.suffix()));
            self.warp_sum(&v, *t);
            totals.push(v);
        }
        // Thread 0 writes; the barrier keeps the next unit off shared memory
        // until every warp has read it.
        let skip = self.f.new_label("not_first");
        let t0 = self.f.reg(Class::Pred);
        self.f.ins(format!("setp.ne.u32 {t0}, {tid}, 0"));
        self.f.ins(format!("@{t0} bra {skip}"));
        for (s, st) in k.stores.iter().enumerate() {
            let total = Val {
                ty: acc_tys[s],
                reg: totals[s].clone(),
            };
            if atomics {
                let dtype = k.args[st.arg].dtype;
                let base = self.bases[st.arg].clone();
                let addr = self.address(&base, Some(&o), dtype.size_bytes());
                let old = self.f.reg(acc_tys[s].class());
                let sfx = acc_tys[s].suffix();
                self.f.ins(format!(
                    "atom.global.add.{sfx} {old}, [{addr}], {}",
                    total.reg
                ));
            } else {
                let value_ty = k.insts[st.value].ty;
                let v = convert(
                    &mut self.f,
                    &total,
                    Ty::of(value_ty).expect("validated type"),
                );
                let v = values::round_to(&mut self.f, v, value_ty);
                self.store(st.arg, &o, &v);
            }
        }
        self.f.place_label(&skip);
        self.f.ins("bar.sync 0");
        self.f.ins(format!("add.u64 {unit}, {unit}, {step}"));
        self.f.ins(format!("bra {unit_top}"));
        self.f.place_label(&end);
        self.f.ins("ret");
    }

    /// Add the stored values of reduced index `r` into the accumulators.
    fn accumulate(&mut self, r: &str, outer_coords: &[Coord], accs: &[String], acc_tys: &[Ty]) {
        let (outer, rank) = (self.k.outer_dims(), self.k.domain.len());
        let mut coords = outer_coords.to_vec();
        coords.extend(self.decode(r, outer..rank));
        let vals = self.eval(&coords);
        for (s, st) in self.k.stores.iter().enumerate() {
            let v = convert(&mut self.f, &vals[st.value], acc_tys[s]);
            let sfx = acc_tys[s].suffix();
            self.f
                .ins(format!("add.rn.{sfx} {0}, {0}, {1}", accs[s], v.reg));
        }
    }

    /// Sum `v` across the warp into lane 0 (`shfl.sync.down`; an f64 moves
    /// as two 32-bit halves).
    fn warp_sum(&mut self, v: &str, ty: Ty) {
        for off in [16, 8, 4, 2, 1] {
            match ty {
                Ty::F64 => {
                    let (lo, hi) = (self.f.reg(Class::B32), self.f.reg(Class::B32));
                    let o = self.f.reg(Class::F64);
                    self.f.ins(format!("mov.b64 {{{lo}, {hi}}}, {v}"));
                    self.f
                        .ins(format!("shfl.sync.down.b32 {lo}, {lo}, {off}, 31, -1"));
                    self.f
                        .ins(format!("shfl.sync.down.b32 {hi}, {hi}, {off}, 31, -1"));
                    self.f.ins(format!("mov.b64 {o}, {{{lo}, {hi}}}"));
                    self.f.ins(format!("add.rn.f64 {v}, {v}, {o}"));
                }
                _ => {
                    let (b, o) = (self.f.reg(Class::B32), self.f.reg(Class::F32));
                    self.f.ins(format!("mov.b32 {b}, {v}"));
                    self.f
                        .ins(format!("shfl.sync.down.b32 {b}, {b}, {off}, 31, -1"));
                    self.f.ins(format!("mov.b32 {o}, {b}"));
                    self.f.ins(format!("add.rn.f32 {v}, {v}, {o}"));
                }
            }
        }
    }
}
