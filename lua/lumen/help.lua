--[[
lumen.help — the help table behind the REPL's :help: a signature and a one-paragraph doc for
every function of docs/API.md, and for Lumen's extras, keyed by the name users type
('lm.zeros', 'Tensor:matmul', 'Tensor.grad', 'F.conv2d', 'nn.Linear', 'kernels.scan', ...).

Availability is decided when help is shown, by looking the name up in the running program: an
entry of a module or function that is not built yet says so plainly ("not available yet") before
describing what API.md promises. Lookup accepts aliases (lumen.x, lm.nn.functional.x, lm.sin for
Tensor:sin, x:matmul for a tensor x, a bare name). Read next: lumen/repl.lua.
]]
local lm = require 'lumen'

local H = { entries = {}, topics = {} }
local E = H.entries

local function doc(name, sig, text) E[name] = { sig = sig, doc = text } end
local function topic(name, text) H.topics[name] = text end

local OPTS = '{dtype=, requires_grad=, device=}'

-- ---------------------------------------------------------------- topics

topic('lm', [[The lumen module (`local lm = require 'lumen'`, the global lm in the REPL and in
scripts): tensor creation, functions that mirror the tensor methods (lm.sin(x) is x:sin()),
joining, autograd switches, memory, threads, lm.cuda, lm.sys.]])
topic('Tensor', [[A tensor: an n-dimensional array of float32 (the default), float64, int32, int64,
uint8, int8, float16 or bfloat16, or of a block type (q8_0, q4_0: 32 values per block, ggml's
layout) on the CPU. Methods are called as x:name(...) and listed below. Indexing is 1-based:
x[i] selects along dim 1 (a view), x[{i, j}] picks elements (a 0-d tensor; :item() gives the
number), x[{{a, b}, j}] takes the range a..b inclusive, x[{i, j}] = v assigns. #x is the size of
dim 1; tostring(x) (and the REPL) prints it with a footer naming dtype, shape and device.
Operators: + - * / // % (elementwise, broadcasting; // floors, % takes the divisor's sign), unary
-, ^. Comparisons are methods (x:gt(0), x:lt(y), x:eq(y)): Lua's < <= > >= give one boolean, so
they raise on tensors, and x == y compares identity (is x the same tensor as y). A Lua float next
to an integer tensor computes in float32, a Lua integer keeps the tensor's dtype (PyTorch's rule).
dtypes: lm.float32 (default), lm.float64, lm.int32, lm.int64, lm.uint8, lm.int8, lm.float16,
lm.bfloat16 (the names; aliases lm.float, lm.double, lm.int, lm.long, 'half', 'char'). float16
and bfloat16 round to nearest even (float16 overflows to inf past 65504); their ops compute in
float32 and round once into the result, sums accumulate in float32, as PyTorch's CPU does; int8
wraps as the other integers. The block types q8_0 and q4_0 come from x:to('q4_0') (the last dim
a multiple of 32) and serve as F.linear weights, conversions and files; other ops refuse them. for i, row in ipairs(x) walks dim 1. Fields: x.grad,
x.grad_fn, x.requires_grad, x.is_leaf.]])
topic('F', [[lm.nn.functional, the global F: differentiable functional forms of the layers and
losses (convolution, pooling, activations, normalisation, dropout, losses).]])
topic('nn', [[Modules (layers with parameters) built on F: nn.Module, nn.Sequential, nn.Linear,
nn.Conv2d, ..., losses and initialisers.]])
topic('optim', [[Optimisers that update parameters from their .grad: optim.SGD, optim.Adam,
optim.AdamW, and learning-rate schedulers.]])
topic('data', [[Data sets and loaders: data.FashionMNIST and data.MNIST (IDX files),
data.TensorDataset, data.DataLoader; text: data.TextFile, data.CharDataset, data.Corpus.]])
topic('kernels', [[The GPU course's parallel patterns, each run three ways (backend 'emu': the CUDA
kernel on a SIMT emulator with a trace; 'cpu': native and timed; 'cuda': on a GPU), and a fourth
for scan, reduce, histogram, matmul, conv2d and spmv ('opencl': the same kernel built as OpenCL C,
timed by events; PoCL runs it on the CPU). Every call
returns out, info; info.source says where the numbers came from, info.impl what actually ran (a
CPU run that serves every algo says so), info.model (emulated runs) what the latency model counts
and ignores, and info.counters holds the counts: adds (of data; padding lanes are idle_lanes),
steps (dependent steps), loads, stores, global_transactions (32-byte sectors), bank_conflicts,
atomics, conflicts, barriers, occupancy, modelled_cycles or time_ms, ... (docs/trace.md defines
each).]])
topic('viz', [[The visualizer: an SDL2/OpenGL window (offscreen without a display) that draws the
course's pictures from the kernels that ran: viz.show(info) after a kernels call, viz.scene(name)
for a demonstration, viz.show(y) for an autograd graph, viz.show(x) for a tensor's storage,
viz.show(model) for a model, viz.show('quant', W) for a weight matrix quantized,
viz.show('attention', {weights=, tokens=}) for attention heads, viz.show('rnn',
viz.rnn_gradients()) for gradients through time, viz.show('queues' | 'mlu' | 'pingpong', ...) for
kernels.bang's runs, viz.show('systolic' | 'dma' | 'energy', ...) for lumen.dlp's array and reports,
viz.plot / viz.follow for live curves. Keys: space play/pause, arrows step, Home/End, +/- speed, Tab variant,
s PNG, ? keys, Esc close. Scenes: scan, reduce, histogram, divergence, conv, matmul, spmv, timeline,
curves, graph, tensor, model, quant, attention, rnn, queues, mlu, pingpong, systolic, dma, energy, threads
(viz.scenes() lists them; docs/viz.md says what each colour means).]])
topic('lesson', [[Lessons: lectures as steps of text, code, a scene and a checked exercise
(lessons/<course>/<NN>-<slug>.lua; the format is docs/lessons.md). In the REPL: :lessons (the
list, with your progress), :lesson NAME or N (opens it where you stopped), :next, :prev, :step N,
:run, :edit (the code into the input line; :edit ! for $EDITOR), :check [EXPR], :hint, :solution,
:where, :lang en|zh. lumen --lesson NAME starts there; lumen --check-lesson FILE checks a file.
Progress is kept in $XDG_STATE_HOME/lumen/lessons (default ~/.local/state/lumen/lessons). The
language: :lang, else LUMEN_LANG, else LANG (zh_* gives Chinese), else English.]])
topic('lm.cuda', [[Queries about CUDA. Tensors live on the CPU in this version; these say whether a
GPU could be used.]])
topic('lm.opencl', [[The OpenCL device: tensors there (x:to('opencl')), the course's kernels with
backend = 'opencl' and kernels.opencl (a kernel of your own in OpenCL C). The OpenCL runtime is
loaded on first use; Debian's PoCL runs it on the CPU, so every machine has one. docs/opencl.md.]])
topic('dlp', [[lumen.dlp (local dlp = require 'lumen.dlp'): a deep-learning processor a student can step
through (AICS ch. 6-7). dlp.array{rows=, cols=, dataflow='os'|'ws'|'is', ifmap_sram_kb=, filter_sram_kb=,
ofmap_sram_kb=, bandwidth=, mode='user'|'calc', banks=, ports=} -> a; a:run(layer [, {events = N}]) -> the
report (total_cycles, stall_cycles, compute_cycles, overall_cycles, overall_util, mapping_efficiency,
compute_util, {ifmap,filter}_sram_reads, ofmap_sram_writes, *_dram_reads/writes, their *_start/*_stop cycles,
avg_*_bw, *_bank_conflict_cycles, events), equal to SCALE-Sim's (v2 counting, scalesim 3.0.0); r:energy()
picojoules per level (dlp.energy_table, its source stated). Layers: dlp.conv{h, w, fh, fw, c, k, stride},
dlp.gemm{m, n, k}, dlp.topology(csv), dlp.alexnet(). a:fold_cycles(layer), a:pe_state(layer, fold_row,
fold_col, cycle). Mappings: dlp.mapping{layer, tiles = {K, C, P, Q, R, S}, order}, a:evaluate(m),
a:search(layer, {objective}), dlp.default_mapping(a, layer). Beside the array: dlp.nfu{tn}, dlp.mvu{rows,
cols}, dlp.general_core{...}, dlp.stages(gemm). Scenes systolic, dma, energy; lessons aics/06-dlp and
aics/07-dlp-design. docs/dlp.md.]])
topic('lm.sys', [[Process helpers used by the test runner, the REPL and the benchmarks.]])
topic('lm.autograd', [[Autograd tools beyond backward: gradient checking, Functions written in Lua.]])
topic('nn.init', [[Initialisers that fill a parameter in place.]])
topic('optim.lr_scheduler', [[Schedulers that change an optimiser's learning rate as epochs pass.]])

-- ---------------------------------------------------------------- creation

doc('lm.tensor', 'lm.tensor(data [, ' .. OPTS .. ']) -> Tensor',
  [[A tensor from a nested table of numbers (rectangular) or a single number (a 0-d tensor).
Integers give int64 and any float float32 unless dtype says otherwise; with requires_grad=true
and no dtype, integers give float32.]])
doc('lm.zeros', 'lm.zeros(d1, d2, ... [, ' .. OPTS .. ']) -> Tensor',
  [[A tensor of the given shape filled with zeros. Sizes are numbers or one table ({2, 3});
dtype defaults to 'float32'.]])
doc('lm.ones', 'lm.ones(d1, d2, ... [, ' .. OPTS .. ']) -> Tensor',
  [[A tensor of the given shape filled with ones. Sizes are numbers or one table.]])
doc('lm.full', 'lm.full({d1, ...}, value [, ' .. OPTS .. ']) -> Tensor',
  [[A tensor of the given shape filled with value. An integer value gives int64, a float
float32, unless dtype says otherwise.]])
doc('lm.empty', 'lm.empty(d1, d2, ... [, ' .. OPTS .. ']) -> Tensor',
  [[A tensor of the given shape whose elements are not initialised (whatever the memory held):
fill it before reading it.]])
doc('lm.arange', 'lm.arange([start,] stop [, step] [, ' .. OPTS .. ']) -> Tensor',
  [[The 1-D tensor start, start + step, ... up to stop, exclusive (start 0 and step 1 by
default). Integer arguments give int64, floats give float32 unless dtype says otherwise.]])
doc('lm.linspace', 'lm.linspace(a, b, n [, ' .. OPTS .. ']) -> Tensor',
  [[n evenly spaced values from a to b, both included (float32 by default).]])
doc('lm.eye', 'lm.eye(n [, m] [, ' .. OPTS .. ']) -> Tensor',
  [[The n x m (m = n by default) matrix with ones on the diagonal and zeros elsewhere.]])
doc('lm.rand', 'lm.rand(d1, d2, ... [, ' .. OPTS .. ']) -> Tensor',
  [[Uniform random numbers in [0, 1) from Lumen's Philox generator (see lm.manual_seed).]])
doc('lm.randn', 'lm.randn(d1, d2, ... [, ' .. OPTS .. ']) -> Tensor',
  [[Standard normal random numbers (mean 0, standard deviation 1) from Lumen's generator.]])
doc('lm.randint', 'lm.randint([lo,] hi, {d1, ...} [, ' .. OPTS .. ']) -> Tensor',
  [[Random integers in lo..hi-1 (hi exclusive, lo 0 by default), int64 unless dtype says
otherwise.]])
doc('lm.manual_seed', 'lm.manual_seed(n)',
  [[Seeds the random generator: the same seed gives the same numbers from lm.rand, lm.randn,
lm.randint, dropout and the in-place random fills.]])
doc('lm.zeros_like', 'lm.zeros_like(x [, ' .. OPTS .. ']) -> Tensor',
  [[Zeros with x's shape, dtype and device (options override).]])
doc('lm.ones_like', 'lm.ones_like(x [, ' .. OPTS .. ']) -> Tensor', [[Ones with x's shape, dtype and device.]])
doc('lm.full_like', 'lm.full_like(x, value [, ' .. OPTS .. ']) -> Tensor', [[value everywhere, with x's shape, dtype and device.]])
doc('lm.empty_like', 'lm.empty_like(x [, ' .. OPTS .. ']) -> Tensor', [[Uninitialised memory with x's shape, dtype and device.]])
doc('lm.rand_like', 'lm.rand_like(x [, ' .. OPTS .. ']) -> Tensor', [[Uniform [0, 1) numbers with x's shape and dtype.]])
doc('lm.randn_like', 'lm.randn_like(x [, ' .. OPTS .. ']) -> Tensor', [[Standard normal numbers with x's shape and dtype.]])
doc('lm.rng_state', 'lm.rng_state() -> seed, offset',
  [[The generator's state: its seed and how many counters were consumed. Give both to
lm.set_rng_state to replay the same numbers.]])
doc('lm.set_rng_state', 'lm.set_rng_state(seed, offset)', [[Restores a state from lm.rng_state.]])
doc('lm.is_tensor', 'lm.is_tensor(v) -> boolean', [[True when v is a Lumen tensor (closed ones too).]])
doc('lm.allclose', 'lm.allclose(a, b [, rtol [, atol]]) -> boolean',
  [[True when |a - b| <= atol + rtol * |b| everywhere (broadcasting); NaNs are never close.
rtol 1e-5 and atol 1e-8 by default, as PyTorch.]])
doc('lm.equal', 'lm.equal(a, b) -> boolean', [[True when a and b have the same shape and the same values.]])

-- ---------------------------------------------------------------- files (the data work)

doc('lm.save', 'lm.save(path, tensor_or_table [, {metadata = {k = "v"}}])',
  [[Writes a safetensors file: one tensor (read back by lm.load as that tensor), or a table of named
tensors such as model:state_dict() (keys are strings; read back as a table), with optional string
metadata. Any layout is written in C order; the file is written to a temporary name and renamed,
so a failed save leaves no half-written file. numpy, PyTorch and the safetensors library read it.
A q8_0 / q4_0 tensor is written as its bytes (U8) with metadata lumen.dtype.<name> and
lumen.shape.<name>, which lm.load reads it back by (those keys are Lumen's: refused in yours).]])
doc('lm.load', 'lm.load(path) -> tensor or {name = tensor}, metadata',
  [[Reads a safetensors file written by lm.save or by other tools (F32, F64, I32, I64, U8, F16,
BF16, I8 as they are; BOOL as uint8, I16, U16 as int32, U32 as int64). The second result is the
file's metadata table. A malformed file is an error naming the file and what is wrong.]])
doc('lm.save_gguf', 'lm.save_gguf(path, {name = tensor, ...} [, {metadata = {k = "v"}}])',
  [[Writes a GGUF file (version 3), the format of ggml and llama.cpp: float32, float64, float16,
bfloat16, int8, int32, int64 and the block types q8_0 / q4_0 as their bytes (uint8 has no ggml
type: convert it first). Names and metadata keys are written sorted; metadata values as strings
(general.alignment, a power of two, as uint32), with general.architecture = "lumen" unless given.
At most 4 dims and 63-byte names (ggml's limits); a 0-d tensor is written as shape [1].]])
doc('lm.load_gguf', 'lm.load_gguf(path) -> {name = tensor}, metadata',
  [[Reads a GGUF file (version 3 or 2): F32, F16, BF16, F64, I8, I32, I64, Q8_0 and Q4_0 tensors
(other ggml types, such as Q4_K, are an error naming the type). The metadata comes back as
strings: numbers in decimal, bools as "true"/"false", arrays as JSON text.]])
doc('lm.load_npy', 'lm.load_npy(path) -> Tensor',
  [[Reads a NumPy .npy file (format 1.0, 2.0 or 3.0; C or Fortran order; either byte order;
float32/64, int32/64, uint8, and bool, float16, int8/16, uint16/32 converted).]])
doc('lm.save_npy', 'lm.save_npy(path, x)', [[Writes x as a NumPy .npy file (format 1.0, C order, little-endian; any layout of x).]])
doc('lm.load_idx', 'lm.load_idx(path [, {scale=, limit=}]) -> Tensor',
  [[Reads an IDX file (the MNIST format), gzip'ed or plain, streamed through zlib. With scale, the
result is float32 times scale (1/255 for images in [0, 1]); limit reads only the first entries
along dim 1. Dims, sizes and the end of the data are checked.]])
doc('lm.load_image', 'lm.load_image(path [, {mode=, dtype=}]) -> Tensor (C, H, W)',
  [[Reads a PNG (libpng) or a JPEG (libjpeg), told apart by their first bytes, not the name. dtype
'float32' (the default) or 'float64' gives values / 255 in [0, 1], 'uint8' the bytes. mode nil keeps
the file's channels (gray 1, gray + alpha 2, RGB 3, RGBA 4); 'gray' converts with ITU-R BT.601 luma
(0.299 R + 0.587 G + 0.114 B, rounded as PIL's convert('L')), 'rgb' replicates gray or drops alpha
(it is not composited), 'rgba' adds an opaque alpha. PNG: palettes, gray of 1-4 bits and tRNS
expanded (a tRNS adds alpha), 16-bit samples keep their high byte, interlaced read whole. JPEG:
gray, YCbCr, RGB (CMYK is refused). A truncated or corrupt file is an error naming it.]])
doc('lm.save_image', 'lm.save_image(path, x [, {nrow=8, padding=2, quality=90, normalize=false}])',
  [[Writes x as a PNG or a JPEG, by the extension (.png, .jpg, .jpeg). x is (H, W), (C, H, W) with C
1, 2 (gray + alpha), 3 or 4 (RGBA), or a batch (N, C, H, W) written as one grid, as torchvision's
save_image: nrow images per row, padding pixels of 0 between and around them. Floats are clamped
to [0, 1] and written as floor(v * 255 + 0.5); uint8 as it is; other dtypes as floats. normalize
rescales by the min and max first. A JPEG has no alpha: 2 or 4 channels are refused there. Any
layout; the file is replaced only once complete.]])

-- ---------------------------------------------------------------- inspection

doc('Tensor:shape', 'x:shape() -> {d1, d2, ...}', [[The sizes of x's dims as a new table (empty for a 0-d tensor).]])
doc('Tensor:size', 'x:size([d]) -> table or integer',
  [[Without d, the shape table; with d (1-based, negatives from the end), the size of that dim.]])
doc('Tensor:dim', 'x:dim() -> integer', [[The number of dims (0 for a 0-d tensor). Also x:ndim().]])
doc('Tensor:ndim', 'x:ndim() -> integer', [[The number of dims, as x:dim().]])
doc('Tensor:numel', 'x:numel() -> integer', [[The number of elements (the product of the sizes).]])
doc('Tensor:dtype', 'x:dtype() -> string', [["float32", "float64", "int32", "int64", "uint8", "int8", "float16", "bfloat16", "q8_0" or "q4_0".]])
doc('Tensor:device', 'x:device() -> string', [["cpu" (or "cuda" once tensors can live on a GPU).]])
doc('Tensor:stride', 'x:stride([d]) -> table or integer',
  [[How many elements to step in memory for one step along each dim (or along dim d).]])
doc('Tensor:is_contiguous', 'x:is_contiguous() -> boolean',
  [[True when x's elements are laid out densely in row-major order (views may not be).]])
doc('Tensor:item', 'x:item() -> number', [[The value of a one-element tensor as a Lua number.]])
doc('Tensor:tolist', 'x:tolist() -> table', [[x's elements as nested Lua tables of numbers (a number for 0-d).]])
doc('Tensor:nbytes', 'x:nbytes() -> integer', [[The bytes of x's elements (numel times the element size).]])
doc('Tensor:version', 'x:version() -> integer',
  [[The in-place version counter: each in-place change increments it (autograd uses it to detect
that a saved tensor changed).]])
doc('Tensor:shares_storage', 'x:shares_storage(y) -> boolean', [[True when x and y are views of the same memory.]])
doc('Tensor:type', 'x:type() -> string', [[The dtype name, as x:dtype().]])
doc('Tensor:close', 'x:close()',
  [[Releases x's memory now instead of at garbage collection (also `local x <close> = ...`).
Later uses raise "tensor is closed"; views keep their own reference.]])
doc('Tensor:is_closed', 'x:is_closed() -> boolean', [[True after x:close().]])

-- ---------------------------------------------------------------- views

doc('Tensor:view', 'x:view(d1, d2, ...) -> Tensor',
  [[A view with a new shape and the same elements (one size may be -1: inferred). x must be
laid out compatibly; x:reshape copies when it is not.]])
doc('Tensor:reshape', 'x:reshape(d1, d2, ...) -> Tensor',
  [[x with a new shape (one size may be -1): a view when possible, else a copy.]])
doc('Tensor:t', 'x:t() -> Tensor', [[The transpose of a 2-D tensor (a view); 0-D and 1-D tensors are returned as they are.]])
doc('Tensor:transpose', 'x:transpose(d1, d2) -> Tensor', [[A view with dims d1 and d2 swapped.]])
doc('Tensor:permute', 'x:permute(d1, d2, ...) -> Tensor', [[A view with the dims in the given order.]])
doc('Tensor:narrow', 'x:narrow(dim, start, length) -> Tensor',
  [[A view of elements start .. start + length - 1 along dim.]])
doc('Tensor:select', 'x:select(dim, i) -> Tensor', [[A view of index i along dim, without that dim.]])
doc('Tensor:expand', 'x:expand(d1, d2, ...) -> Tensor',
  [[A view that repeats dims of size 1 to the given sizes without copying (-1 keeps a size).]])
doc('Tensor:expand_as', 'x:expand_as(y) -> Tensor', [[x expanded to y's shape.]])
doc('Tensor:squeeze', 'x:squeeze([d]) -> Tensor', [[A view without dims of size 1 (or without dim d, when its size is 1).]])
doc('Tensor:unsqueeze', 'x:unsqueeze(d) -> Tensor', [[A view with a new dim of size 1 at position d.]])
doc('Tensor:flatten', 'x:flatten([start [, end]]) -> Tensor', [[Dims start..end (1 and -1 by default) merged into one.]])
doc('Tensor:contiguous', 'x:contiguous() -> Tensor', [[x itself when contiguous, else a dense copy.]])
doc('Tensor:clone', 'x:clone() -> Tensor', [[A copy with its own memory (differentiable).]])
doc('Tensor:detach', 'x:detach() -> Tensor', [[A view of x's data cut from the autograd graph (requires no grad).]])

-- ---------------------------------------------------------------- arithmetic

doc('Tensor:add', 'x:add(y [, {alpha=}]) -> Tensor', [[x + y, elementwise with broadcasting; y a tensor or a number. Also lm.add(x, y) and x + y. With {alpha=a}: x + a * y in one pass (as torch.add); sub takes alpha too, and add_/sub_ with alpha are the optimizers' update w:sub_(g, {alpha=lr}).]])
doc('Tensor:sub', 'x:sub(y) -> Tensor', [[x - y, elementwise with broadcasting. Also x - y.]])
doc('Tensor:mul', 'x:mul(y) -> Tensor', [[x * y elementwise (not the matrix product: see x:matmul). Also x * y.]])
doc('Tensor:div', 'x:div(y) -> Tensor', [[x / y elementwise with broadcasting. Also x / y.]])
doc('Tensor:pow', 'x:pow(p) -> Tensor', [[x to the power p (a number or a tensor), elementwise. Also x ^ p.]])
doc('Tensor:floor_divide', 'x:floor_divide(y) -> Tensor', [[x // y elementwise with broadcasting: the quotient rounded toward -inf (as Lua's // and torch.floor_divide), so x == (x // y) * y + x % y. Integers stay integers (a division by an integer 0 is an error); floats follow IEEE (x // 0 is +-inf). Also lm.floor_divide(x, y), x // y and x:floor_divide_(y). Its gradient is 0.]])
doc('Tensor:remainder', 'x:remainder(y) -> Tensor', [[x % y elementwise with broadcasting: the remainder with the sign of the divisor (as Lua's % and torch.remainder; fmod would take x's). Also lm.remainder(x, y), x % y and x:remainder_(y). Differentiable: d/dx = 1, d/dy = -(x // y).]])
doc('lm.floor_divide', 'lm.floor_divide(a, b) -> Tensor', [[a // b, as a:floor_divide(b); a or b may be a number.]])
doc('lm.remainder', 'lm.remainder(a, b) -> Tensor', [[a % b, as a:remainder(b); a or b may be a number.]])
doc('Tensor:matmul', 'x:matmul(y) -> Tensor',
  [[The matrix product: 1-D x 1-D is a dot product, 2-D x 2-D a matrix product, more dims are
batches (broadcast). float32/float64 go through OpenBLAS. Also lm.matmul(a, b).]])
doc('Tensor:mm', 'x:mm(y) -> Tensor', [[The product of two 2-D matrices (no broadcasting). Also lm.mm.]])
doc('lm.matmul', 'lm.matmul(a, b) -> Tensor', [[The matrix product, as a:matmul(b) (1-D, 2-D, batched).]])
doc('lm.mm', 'lm.mm(a, b) -> Tensor', [[The product of two 2-D matrices.]])
doc('Tensor:add_', 'x:add_(y) -> x', [[Adds y to x in place and returns x.]])
doc('Tensor:sub_', 'x:sub_(y) -> x', [[Subtracts y from x in place.]])
doc('Tensor:mul_', 'x:mul_(y) -> x', [[Multiplies x by y in place.]])
doc('Tensor:div_', 'x:div_(y) -> x', [[Divides x by y in place.]])
doc('Tensor:pow_', 'x:pow_(p) -> x', [[Raises x to the power p in place.]])
doc('Tensor:fill_', 'x:fill_(v) -> x', [[Sets every element of x to v.]])
doc('Tensor:zero_', 'x:zero_() -> x', [[Sets every element of x to 0.]])
doc('Tensor:copy_', 'x:copy_(y) -> x', [[Copies y's elements into x (y broadcast to x's shape, converted to x's dtype).]])
doc('Tensor:uniform_', 'x:uniform_([a [, b]]) -> x', [[Fills x with uniform random numbers in [a, b) (0 and 1 by default).]])
doc('Tensor:normal_', 'x:normal_([mean [, std]]) -> x', [[Fills x with normal random numbers (0 and 1 by default).]])
doc('Tensor:bernoulli_', 'x:bernoulli_(p) -> x', [[Fills x with 1 with probability p, else 0.]])

-- ---------------------------------------------------------------- math

local unary = {
  exp = 'e to the power x', log = 'the natural logarithm', sqrt = 'the square root',
  abs = 'the absolute value', neg = 'minus x (also -x)', sin = 'the sine', cos = 'the cosine',
  tanh = 'the hyperbolic tangent', sigmoid = 'the logistic sigmoid 1 / (1 + e^-x)',
  relu = 'max(x, 0)', sign = 'the sign: -1, 0 or 1', floor = 'rounded down', ceil = 'rounded up',
  round = 'rounded to the nearest integer (halves to even)', rsqrt = '1 / sqrt(x)',
  reciprocal = '1 / x', square = 'x * x',
}
for name, what in pairs(unary) do
  doc('Tensor:' .. name, 'x:' .. name .. '() -> Tensor',
    'Elementwise ' .. what .. '. Also lm.' .. name .. '(x); x:' .. name ..
    '_() changes x in place and returns it. Differentiable.')
end
doc('Tensor:clamp', 'x:clamp(lo, hi) -> Tensor', [[Each element limited to [lo, hi]; either bound may be nil. Also x:clamp_(lo, hi).]])
local compare = { eq = '==', ne = '~=', gt = '>', lt = '<', ge = '>=', le = '<=' }
local compare_note = {
  eq = ' Not x == y: for two tensors Lua\'s == compares identity (the same tensor), never elements, and a tensor == a number is false.',
  ne = ' Not x ~= y, which compares identity.',
  gt = ' Lua\'s x > y cannot give a tensor (it gives one boolean), so it raises: write x:gt(y).',
  lt = ' Lua\'s x < y cannot give a tensor (it gives one boolean), so it raises: write x:lt(y).',
  ge = ' Lua\'s x >= y raises for the same reason: write x:ge(y).',
  le = ' Lua\'s x <= y raises for the same reason: write x:le(y).',
}
for name, op in pairs(compare) do
  doc('Tensor:' .. name, 'x:' .. name .. '(y) -> Tensor (uint8)',
    'Elementwise x ' .. op .. ' y with broadcasting (y a tensor or a number): 1 where true, 0 elsewhere, as uint8. Also lm.' .. name .. '(x, y).' .. compare_note[name])
end
doc('lm.where', 'lm.where(cond, a, b) -> Tensor',
  [[a where cond is nonzero, b elsewhere, elementwise with broadcasting; a and b are tensors or numbers.]])
doc('lm.maximum', 'lm.maximum(a, b) -> Tensor', [[The elementwise larger of a and b (broadcasting). Also x:max(y) for a tensor y.]])
doc('lm.minimum', 'lm.minimum(a, b) -> Tensor', [[The elementwise smaller of a and b (broadcasting).]])
doc('Tensor:softmax', 'x:softmax([dim = -1]) -> Tensor', [[exp(x) / sum(exp(x)) along dim, computed stably. Also F.softmax.]])
doc('Tensor:log_softmax', 'x:log_softmax([dim = -1]) -> Tensor', [[log(softmax(x)) along dim, computed stably. Also F.log_softmax.]])

-- ---------------------------------------------------------------- reductions

doc('Tensor:sum', 'x:sum([dim or {dims} [, keepdim]]) -> Tensor',
  [[The sum of all elements (a 0-d tensor: :item() gives the number), or along dim (removed
unless keepdim), or over several dims at once: x:sum({1, 3}) ({} is every dim, as PyTorch's
dim=[]).]])
doc('Tensor:mean', 'x:mean([dim or {dims} [, keepdim]]) -> Tensor', [[The mean of all elements, along dim, or over several dims ({1, 3}).]])
doc('Tensor:amax', 'x:amax([dim or {dims} [, keepdim]]) -> Tensor', [[The largest element of all, along dim or over several dims, without indices (torch.amax); the gradient is shared among equal maxima. Also lm.amax.]])
doc('Tensor:amin', 'x:amin([dim or {dims} [, keepdim]]) -> Tensor', [[The smallest element of all, along dim or over several dims (torch.amin). Also lm.amin.]])
doc('Tensor:var', 'x:var([dim or {dims} [, keepdim]] [, {unbiased=, correction=}]) -> Tensor',
  [[The variance, unbiased (divides by n - 1) by default; {correction=0} divides by n. Over one
dim, several ({1, 3}) or all.]])
doc('Tensor:std', 'x:std([dim or {dims} [, keepdim]] [, {unbiased=, correction=}]) -> Tensor', [[The standard deviation, the square root of x:var(...).]])
doc('Tensor:max', 'x:max([dim [, keepdim]]) -> values [, indices]',
  [[The largest element (0-d), or along dim the values and their 1-based int64 indices. x:max(y)
with a tensor y is lm.maximum(x, y). One dim only (as in PyTorch): x:amax({1, 2}) reduces over
several.]])
doc('Tensor:min', 'x:min([dim [, keepdim]]) -> values [, indices]', [[The smallest element, or along dim the values and their 1-based indices.]])
doc('Tensor:argmax', 'x:argmax([dim [, keepdim]]) -> Tensor (int64)', [[The 1-based index of the largest element (of all, or along dim).]])
doc('Tensor:argmin', 'x:argmin([dim [, keepdim]]) -> Tensor (int64)', [[The 1-based index of the smallest element.]])
doc('Tensor:prod', 'x:prod([dim [, keepdim]]) -> Tensor', [[The product of all elements or along dim.]])
doc('Tensor:norm', 'x:norm([p [, dim or {dims} [, keepdim]]]) -> Tensor', [[The p-norm (p = 2 by default; math.huge gives the largest |x|), of all elements, along dim or over several dims.]])
doc('Tensor:cumsum', 'x:cumsum(dim) -> Tensor', [[Running sums along dim (an inclusive scan).]])

-- ---------------------------------------------------------------- shape, joining, indexing

doc('Tensor:tril', 'x:tril([k = 0]) -> Tensor', [[The lower triangle of a matrix (elements above diagonal k set to 0).]])
doc('Tensor:triu', 'x:triu([k = 0]) -> Tensor', [[The upper triangle of a matrix.]])
doc('Tensor:tile', "x:tile(r1, r2, ...) -> Tensor (also x['repeat'])",
  [[Copies of x along each dim; fewer counts than dims repeat the last dims.]])
doc('Tensor:repeat', "x['repeat'](x, r1, r2, ...) -> Tensor",
  [[The same as x:tile(r1, r2, ...) ('repeat' is a Lua keyword, so x:repeat(...) cannot be written).]])
doc('Tensor:flip', 'x:flip(d1, d2, ...) -> Tensor', [[A copy with the order of elements reversed along the given dims.]])
doc('lm.cat', 'lm.cat({a, b, ...} [, dim = 1]) -> Tensor', [[The tensors joined along an existing dim (the other sizes must match).]])
doc('lm.stack', 'lm.stack({a, b, ...} [, dim = 1]) -> Tensor', [[The tensors (all one shape) joined along a new dim.]])
doc('Tensor:index_select', 'x:index_select(dim, index) -> Tensor', [[The entries along dim at the 1-based int64 indices of the 1-D tensor index.]])
doc('Tensor:gather', 'x:gather(dim, index) -> Tensor',
  [==[For dim 1, out[i][j] = x[index[i][j]][j] (and alike for other dims); index holds 1-based
positions and gives the result's shape.]==])
doc('Tensor:scatter_add', 'x:scatter_add(dim, index, src) -> Tensor', [[A copy of x with src's elements added at the 1-based positions index along dim.]])
doc('Tensor:masked_fill', 'x:masked_fill(mask, value) -> Tensor', [[A copy of x with value where mask (broadcast) is nonzero.]])
doc('Tensor:sort', 'x:sort([dim = -1 [, descending = false]]) -> values, indices', [[The elements sorted along dim (stable), and their 1-based original positions.]])
doc('Tensor:topk', 'x:topk(k [, dim = -1 [, largest = true]]) -> values, indices', [[The k largest (or smallest) elements along dim and their 1-based positions.]])
doc('lm.one_hot', 'lm.one_hot(index [, num_classes]) -> Tensor (int64)',
  [[A (..., C) tensor with 1 at each 1-based class index and 0 elsewhere; C defaults to the
largest index.]])

-- ---------------------------------------------------------------- conversion

doc('Tensor:float', 'x:float() -> Tensor', [[x as float32 (x itself when it already is).]])
doc('Tensor:double', 'x:double() -> Tensor', [[x as float64.]])
doc('Tensor:int', 'x:int() -> Tensor', [[x as int32 (floats truncated toward zero).]])
doc('Tensor:long', 'x:long() -> Tensor', [[x as int64.]])
doc('Tensor:byte', 'x:byte() -> Tensor', [[x as uint8.]])
doc('Tensor:char', 'x:char() -> Tensor', [[x as int8 (floats truncated toward zero, then wrapped modulo 256).]])
doc('Tensor:half', 'x:half() -> Tensor',
  [[x as float16 (IEEE binary16: rounded to nearest even, past 65504 to inf). Its ops compute in
float32 and round once into the result.]])
doc('Tensor:bfloat16', 'x:bfloat16() -> Tensor',
  [[x as bfloat16 (float32's range, 8 bits of mantissa: rounded to nearest even). Its ops compute
in float32 and round once into the result.]])
doc('Tensor:to', "x:to(dtype_or_device) or x:to({dtype=, device=}) -> Tensor",
  [[x converted to a dtype ('float64', ...) or moved to a device ('cpu', 'cuda', 'opencl'); x itself when
nothing changes. Moving is differentiable: the gradient comes back to x's device.]])
doc('Tensor:cuda', 'x:cuda() -> Tensor',
  [[x on the GPU (a copy; x itself when it is there). Without a GPU it raises and says why (no
driver, no device, or a build without CUDA). Ops on tensors of two devices are an error naming
both; print(x) copies a GPU tensor back and says "on cuda:0".]])
doc('Tensor:cpu', 'x:cpu() -> Tensor', [[x on the CPU (a copy of a GPU tensor; x itself when it is there).]])
doc('Tensor:pin_memory', 'x:pin_memory() -> Tensor',
  [[A copy of x in pinned (page-locked) host memory, which crosses to the GPU without staging.
Needs a GPU.]])
doc('Tensor:is_pinned', 'x:is_pinned() -> boolean', [[Whether x lies in pinned host memory.]])
doc('lm.cuda.device_count', 'lm.cuda.device_count() -> integer', [[GPUs the driver reports (0 without one); Lumen uses GPU 0.]])
doc('lm.cuda.memory_allocated', 'lm.cuda.memory_allocated() -> bytes',
  [[Bytes of GPU memory held by tensors (the caching allocator's blocks, rounded up to size classes).]])
doc('lm.cuda.max_memory_allocated', 'lm.cuda.max_memory_allocated() -> bytes', [[The peak of lm.cuda.memory_allocated().]])
doc('lm.cuda.memory_cached', 'lm.cuda.memory_cached() -> bytes', [[Bytes of freed GPU blocks kept for reuse.]])
doc('lm.cuda.reset_peak_memory_stats', 'lm.cuda.reset_peak_memory_stats()', [[Restarts max_memory_allocated from now.]])
doc('lm.cuda.empty_cache', 'lm.cuda.empty_cache()', [[Gives cached GPU memory back to the driver.]])
doc('lm.cuda.synchronize', 'lm.cuda.synchronize()', [[Waits until the GPU has run everything queued.]])
doc('lm.float32', 'lm.float32, lm.float64, lm.int32, lm.int64, lm.uint8, lm.int8, lm.float16, lm.bfloat16, lm.q8_0, lm.q4_0 (strings)',
  [[The dtype names, so {dtype = lm.float64} and x:dtype() == lm.float64 read as in PyTorch (the
strings 'float64' work the same). Aliases: lm.float, lm.double, lm.int, lm.long, lm.half.]])
doc('lm.planned', 'lm.planned -> {globals=, lm=, ["lm.cuda"]=, Tensor=}',
  [[What docs/API.md promises that this build may not have yet, by where a user meets it: reading
such a global (nn, viz, ...), calling lm.save or x:pin_memory says it is not built yet, instead of
Lua's "attempt to index a nil value". A name that exists is simply found.]])
doc('lm.cuda.is_available', 'lm.cuda.is_available() -> boolean',
  [[True when a CUDA GPU can be used: loads Lumen's CUDA module on first use and asks the driver.]])
doc('lm.cuda.device_name', 'lm.cuda.device_name() -> string or nil, reason', [[The name of GPU 0.]])
doc('lm.cuda.unavailable_reason', 'lm.cuda.unavailable_reason() -> string', [[Why no GPU can be used ("" when one can).]])
doc('Tensor:opencl', 'x:opencl() -> Tensor',
  [[x on the OpenCL device (a copy; x itself when it is there), as x:to('opencl'). The elementwise
ops (integers too), reductions, matmul (a tiled kernel in local memory), softmax, nll and the
optimizers' steps run there; an op it lacks raises naming the op, the device and the dtype
(lumen --ops: the opencl column). Without an OpenCL device it raises and says why.]])
doc('lm.opencl.is_available', 'lm.opencl.is_available() -> boolean',
  [[True when an OpenCL device can be used: loads the ICD loader (libOpenCL.so.1) on first use and
asks its platforms. LUMEN_OPENCL_DEVICE (an index in lm.opencl.devices() order, or part of a
name) picks the device; else the first.]])
doc('lm.opencl.unavailable_reason', 'lm.opencl.unavailable_reason() -> string or nil',
  [[Why no OpenCL device can be used (no loader, no platform, no device, a build without the
headers); nil when one can.]])
doc('lm.opencl.device_name', 'lm.opencl.device_name() -> string or nil, reason', [[The name of the device Lumen uses.]])
doc('lm.opencl.devices', 'lm.opencl.devices() -> {{name=, platform=, version=, c_version=, driver=, compute_units=, global_mem=, local_mem=, max_alloc=, max_work_group=, fp64=, in_use=}, ...}',
  [[Every device of every OpenCL platform, with its OpenCL names and limits; in_use marks the one
Lumen runs on.]])
doc('lm.opencl.synchronize', 'lm.opencl.synchronize()', [[Waits until the device has run everything queued.]])
doc('lm.opencl.program_stats', 'lm.opencl.program_stats() -> {compiles=, hits=}',
  [[OpenCL programs built since start, and builds served from Lumen's cache (a program is built
once per source and options).]])

-- ---------------------------------------------------------------- autograd

doc('Tensor:backward', 'y:backward([grad] [, {retain_graph=true}])',
  [[Computes the gradients of y with respect to the leaves that require grad and adds them to
their .grad. A scalar y needs no grad argument. The graph is freed unless retain_graph.]])
doc('Tensor:requires_grad_', 'x:requires_grad_([flag = true]) -> x', [[Makes autograd record the operations on x (only float tensors).]])
doc('Tensor.requires_grad', 'x.requires_grad (field; assignable)', [[Whether autograd records operations on x.]])
doc('Tensor.grad', 'x.grad (field; assignable, nil to clear)', [[The gradient accumulated by backward, or nil.]])
doc('Tensor.grad_fn', 'x.grad_fn (field) -> node | nil', [[The node of the operation that made x, or nil for a leaf.
grad_fn:name() is its name ('MulBackward'; tostring and .. give it too), grad_fn.op the op that ran
('mul', as lm.ops() lists it), grad_fn.params the op's recorded parameters by name (dims and
indices counted from 1: x:sum(2).grad_fn.params is {dim = 2, keepdim = false}), and
grad_fn.next_functions one {fn, 1} per input: the input's own grad_fn, an AccumulateGrad whose
.variable is the leaf its gradient goes to, or {nil, 1} where no gradient flows (as PyTorch's).]])
doc('Tensor.is_leaf', 'x.is_leaf (field)', [[True when x was not made by a recorded operation.]])
doc('lm.no_grad', 'lm.no_grad(fn, ...) -> fn(...)', [[Calls fn with autograd recording off and returns its results.]])
doc('lm.set_grad_enabled', 'lm.set_grad_enabled(flag) -> previous', [[Turns autograd recording on or off; returns the previous mode.]])
doc('lm.is_grad_enabled', 'lm.is_grad_enabled() -> boolean', [[Whether autograd records operations now.]])
doc('lm.autograd.gradcheck', 'lm.autograd.gradcheck(fn, inputs [, {eps=, atol=, rtol=}]) -> ok, report',
  [[Compares the gradients of fn(table.unpack(inputs)) (a tensor) from backward with float64
central differences; returns true or false and a report.]])
doc('lm.autograd.Function', "lm.autograd.Function(name) or lm.autograd.Function{name=, forward=, backward=} -> F",
  [[A differentiable op written in Lua, as PyTorch's torch.autograd.Function. Define
F.forward(ctx, ...) (runs with grad off, returns one tensor) and F.backward(ctx, grad) (one
gradient per forward argument: a tensor of its shape, or nil), then y = F:apply(...) or F(...);
y.grad_fn is '<name>Backward'. ctx:save_for_backward(...) keeps tensors (refused at backward if
changed in place since), ctx.saved_tensors gives them back, ctx.needs_input_grad[i] says whether
argument i wants a gradient; other ctx fields are yours. Example:
  local Scale = lm.autograd.Function('Scale')
  function Scale.forward(ctx, x, k) ctx.k = k return x * k end
  function Scale.backward(ctx, g) return g * ctx.k, nil end
lumen.dist's tensor-parallel layers are built of such Functions.]])

-- ---------------------------------------------------------------- memory, threads, build

doc('lm.memory', 'lm.memory() -> table',
  [[Tensor memory: {live_bytes, peak_bytes, cached_bytes, limit_bytes, allocs, cache_hits,
live_tensors, caching}. The REPL's :mem prints it.]])
doc('lm.set_memory_limit', 'lm.set_memory_limit(bytes) -> previous', [[Caps tensor memory (0: the machine's RAM); larger totals fail with an error.]])
doc('lm.empty_cache', 'lm.empty_cache()', [[Gives the allocator's cached blocks back to the system.]])
doc('lm.reset_peak_memory', 'lm.reset_peak_memory()', [[Restarts the peak of lm.memory() from the live bytes.]])
doc('lm.set_num_threads', 'lm.set_num_threads(n)', [[Threads for Lumen's loops and OpenBLAS (0: all cores;
at most 4 per core, 64 on small machines).]])
doc('lm.get_num_threads', 'lm.get_num_threads() -> integer', [[The number of threads in use.]])
doc('lm.build_info', 'lm.build_info() -> table', [[How this Lumen was built: version, BLAS and its threading, OpenMP, CUDA, sanitizers, compiler, Lua.]])
doc('lm.version', 'lm.version (string)', [[Lumen's version.]])
doc('lm.lua_dir', 'lm.lua_dir (string)', [[The directory of Lumen's Lua library.]])
doc('lm.ops', 'lm.ops() -> {{name=, backward=, arity=, loop=, dtypes=, params=, devices=}, ...}',
  [[The engine's op table, one entry per op of its one list of ops (src/ops/oplist.h): its name ('exp'),
its grad_fn name (backward: 'ExpBackward', nil when it has no backward rule), its inputs (arity; -1
for a list), the device loop it runs (loop: 'unary'; 'copy' for the device's copies, 'view' for
geometry only), its dtype rule in words, the names of the parameters its grad_fn.params holds, and
per device (devices.cpu, devices.cuda) the input dtypes that device runs it for. The cuda list is
what the CUDA backend implements, whether or not a GPU is here (lm.cuda.is_available() says that).
`lumen --ops` prints the same as a table.]])
doc('lm.sys.clock', 'lm.sys.clock() -> seconds', [[A monotonic clock in seconds (a float), for timing.]])
doc('lm.sys.write_file', 'lm.sys.write_file(path, text)',
  [[Writes text as the whole file at path, the way Lumen writes every file: a regular file only (a
directory, device, FIFO or socket at path is an error; a symlink is followed), its mode, owner and
hard links kept, the contents complete and fsync'ed before they replace the old ones, so an error,
Ctrl-C or a kill leaves the old file as it was and no temporary behind.]])
doc('lm.sys.check_write', 'lm.sys.check_write(path) -> true | nil, why',
  [[Whether path may be written as a file: a new one, or a regular file this user may write (a
symlink is followed). For files written as they go, such as a CSV log.]])
doc('lm.sys.read_file', 'lm.sys.read_file(path) -> text | nil, why, what',
  [[The whole file at path, read the way Lumen reads every file meant to be one: a regular file only
(a symlink is followed). A FIFO, /dev/zero, a device or a directory is refused at once (a FIFO
would block, /dev/zero never end): nil, why and what, one of 'missing', 'not regular',
'unreadable'.]])
doc('lm.sys.isfile', 'lm.sys.isfile(path) -> true | false, what',
  [[Whether path is a regular file (a symlink is followed), without opening it: true, or false and
'missing' or what is there ('a directory', 'a FIFO (named pipe)', 'a character device', ...).]])
doc('lm.sys.lang', "lm.sys.lang(['en' | 'zh' | false]) -> lang, why",
  [[The language of what Lumen writes for people besides API errors: lessons, the emulator's
sanitizer reports and the scenes' labels; and where it came from (':lang', 'LUMEN_LANG=...',
'LANG=...', 'the default'). 'en' or 'zh' sets it (what the lessons' :lang does), false goes back
to LUMEN_LANG, then LANG (zh_* gives Chinese), then English.]])
doc('lm.sys.listdir', 'lm.sys.listdir(path) -> names or nil, message', [[The entries of a directory, without . and ...]])
doc('lm.sys.isdir', 'lm.sys.isdir(path) -> boolean', [[True when path is a directory.]])
doc('lm.sys.term_size', 'lm.sys.term_size() -> columns, rows or nil', [[The size of the terminal on
standard output (else standard error), or nil when neither is a terminal. The lesson runner wraps
its text to the width.]])
doc('lm.sys.executable', 'lm.sys.executable() -> path', [[The path of the running lumen program.]])
doc('lm.sys.fail_alloc_after', 'lm.sys.fail_alloc_after(k)', [[Makes the k-th allocation from now fail (0 disables): for leak tests.]])

-- ---------------------------------------------------------------- F

doc('F.linear', 'F.linear(x, w [, b]) -> Tensor', [[x w^T + b: x (..., in), w (out, in), b (out). w may be
of a block type (w:to('q4_0') or 'q8_0'): then each row of x is quantized to q8_0 on the fly and
multiplied by the blocks (ggml's scheme, the 4-bit product at memory speed); x's gradient goes
through the dequantized weight.]])
doc('Tensor:as_strided', 'x:as_strided(size, stride [, storage_offset]) -> Tensor',
  [[A view of x's storage with the given sizes and strides (in elements; storage_offset 0-based, x's own by
default), checked against the storage's bounds; writing through a view whose elements overlap is refused.]])
doc('F.lstm_cell', 'F.lstm_cell(gates, c) -> Tensor (B, 2H)',
  [[One LSTM step's gates, fused: gates (B, 4H) are the pre-activations in PyTorch's order (i, f, g, o), c (B, H)
the cell state; the result holds [h | c'] with c' = s(f) c + s(i) tanh(g) and h = s(o) tanh(c'). One loop
forward and one backward (nn.LSTM runs it each time step).]])
doc('F.gru_cell', 'F.gru_cell(xg, hg, h) -> Tensor (B, H)',
  [[One GRU step's gates, fused: xg and hg (B, 3H) are the input's and the hidden state's parts of the gates in
PyTorch's order (r, z, n; hg with b_hh), h (B, H): h' = (1 - z) n + z h with n = tanh(x_n + r h_n). One loop
forward and one backward (nn.GRU runs it each time step).]])
doc('F.flash_attention', 'F.flash_attention(q, k, v [, {is_causal=false, scale=1/sqrt(E)}]) -> Tensor',
  [[softmax(q k^T scale [causal: key j <= query i]) v without the L x S matrix: q (..., L, E), k (..., S, E),
v (..., S, Ev) with the same leading dims. An online softmax over 64 x 64 blocks forward (FlashAttention's
scheme: memory linear in the sequence) and a backward that recomputes the weights block by block.]])
doc('F.unfold', "F.unfold(x, kernel_size [, {stride=1, padding=0, dilation=1, layout='nchw'}]) -> Tensor",
  [[im2col: x (N, C, H, W) -> (N, C*kh*kw, L), one column per output position (torch's layout): a
convolution is W (out, C*kh*kw) times it. layout='nhwc' (the op im2col_nhwc, channels last): x (N, H, W, C)
-> (N, L, kh*kw*C), one row per output position holding each window position's C channels; a
convolution in NHWC is it times W permuted to (out, kh, kw, C), transposed: the result (N, L, out) is NHWC
already. Not differentiable; the CPU has the loop, CUDA and OpenCL do not (the graph compiler's layout
pass uses it: lm.graph.passes).]])

-- ---------------------------------------------------------------- quantization

topic('quant', [[lm.quant: quantization and mixed precision (lumen/quant.lua; the lesson
aics/03-quantization). Symmetric codes in [-(2^(b-1)-1), 2^(b-1)-1] with s = max|x| / (2^(b-1)-1);
asymmetric codes in [0, 2^b-1] over [min(x,0), max(x,0)] with a zero point; per tensor, per channel
(axis) or per group (group_size along the last dim); rounding half to even. quantize / dequantize,
fake_quantize (straight-through), observers, quantize_weights (weight-only PTQ), prepare + convert
(static int8 with calibration), prepare_qat, smooth (SmoothQuant), lm.autocast, GradScaler,
nn.quantized.Linear / Conv2d (exact int8 products by quant.int_mm).]])
doc('lm.vision.box_area', 'lm.vision.box_area(boxes) -> Tensor', [[The areas (x2 - x1)(y2 - y1) of (N, 4) boxes
given by corners x1, y1, x2, y2 (x1 <= x2, y1 <= y2; integer corners are taken as float32).]])
doc('lm.vision.box_iou', 'lm.vision.box_iou(boxes1, boxes2) -> Tensor', [[(N, M): the intersection over union
of every box of boxes1 (N, 4) with every box of boxes2 (M, 4), corners x1, y1, x2, y2 as torchvision.ops.box_iou;
two boxes of no area give 0 (not NaN); a box with x2 < x1 or y2 < y1 is an error naming it. Differentiable.]])
doc('lm.vision.nms', 'lm.vision.nms(boxes, scores, iou_threshold) -> Tensor', [[Non-maximum suppression as
torchvision.ops.nms: the int64 indices (1-based) of the boxes kept, by decreasing score; a box is dropped when
its IoU with a box kept before it is above iou_threshold. Equal scores: the lower index first.]])
doc('lm.quant.quantize', "quant.quantize(x [, {bits=8, symmetric=true, granularity='tensor'|'channel'|'group', axis=1, group_size=32, scale=, zero_point=}]) -> q",
  [[The codes q.q (int8 symmetric, uint8 asymmetric), q.scale and q.zero_point per granule; q:dequantize().
NaN or Inf, a group size that does not divide the dim, a scale that is not positive: errors. An
all-zero granule takes float32's epsilon as its scale (zeros stay exact).]])
doc('lm.quant.dequantize', 'quant.dequantize(q) -> Tensor', [[s (q - z), in the dtype quantize was given.]])
doc('lm.quant.fake_quantize', 'quant.fake_quantize(x [, opts]) -> Tensor',
  [[x quantized and dequantized (the forward of QAT); its gradient passes straight through where x
lies inside the grid's range and is 0 where it was clipped.]])
doc('lm.quant.MinMaxObserver', 'quant.MinMaxObserver([opts]) -> obs', [[obs(x) records the running min and max; obs:range(), obs:qparams() -> scale, zero_point.]])
doc('lm.quant.MovingAverageMinMaxObserver', 'quant.MovingAverageMinMaxObserver([{averaging_constant=0.01, ...}]) -> obs',
  [[min and max averaged over batches: m <- m + c (batch - m).]])
doc('lm.quant.HistogramObserver', 'quant.HistogramObserver([{bins=2048, percentile=99.99}]) -> obs',
  [[A histogram of what it sees (per tensor); the range clips the (100 - percentile)% most extreme values on each side.]])
doc('lm.quant.qparams', 'quant.qparams(min, max [, opts]) -> scale, zero_point', [[The rule above for a given range.]])
doc('lm.quant.quantize_weights', 'quant.quantize_weights(model [, opts]) -> model',
  [[Every Linear and Conv2d weight replaced in place by its quantized-dequantized values (weight-only PTQ).]])
doc('lm.quant.prepare', "quant.prepare(model [, {observer='minmax'|'moving_average'|'histogram', percentile=}]) -> model",
  [[Each Linear and Conv2d observes its input as calibration batches go through; then quant.convert.]])
doc('lm.quant.convert', 'quant.convert(model) -> model',
  [[Every Linear and Conv2d replaced by nn.quantized.Linear / Conv2d (int8 weights per channel; uint8
activations with the calibrated range, else each batch's).]])
doc('lm.quant.prepare_qat', 'quant.prepare_qat(model [, opts]) -> model',
  [[Each Linear and Conv2d computes with fake_quantize(weight, opts): train it to recover low-bit accuracy.
quant.unprepare(model) undoes prepare and prepare_qat.]])
doc('lm.quant.unprepare', 'quant.unprepare(model) -> model', [[Removes what prepare and prepare_qat installed; a
smoothed layer stays smoothed (its weights carry s).]])
doc('lm.quant.smooth', 'quant.smooth(model, batches [, {alpha=0.5}]) -> stats',
  [[SmoothQuant: s_j = max|X_j|^alpha / max|W_j|^(1-alpha) per input channel of every Linear; the weights
take s, the input 1/s; stats[name] holds act_max_before/after, weight_max_before/after, s.]])
doc('lm.quant.GradScaler', 'quant.GradScaler([{init_scale=65536, growth_factor=2, backoff_factor=0.5, growth_interval=2000}]) -> scaler',
  [[Dynamic loss scaling for float16: scaler:scale(loss):backward(); scaler:step(opt) (skipped, and the
scale halved, when a gradient is inf or NaN); scaler:update().]])
doc('lm.quant.int_mm', 'quant.int_mm(a, b) -> Tensor (int32)', [[The exact product of uint8 (M, K) and int8 (K, N) codes.]])
doc('lm.quant.autocast', "lm.autocast('bfloat16'|'float16', fn, ...) -> fn(...)",
  [[Runs fn with F.linear, F.conv2d and lm.matmul in the 16-bit type and the losses, softmax and norms
in float32 (PyTorch's CPU autocast lists); parameters stay float32.]])
doc('lm.autocast', "lm.autocast('bfloat16'|'float16', fn, ...) -> fn(...)", [[See lm.quant.autocast.]])
doc('nn.quantized.Linear', 'nn.quantized.Linear.from_float(linear [, {scale=, zero_point=}])',
  [[An int8 Linear: weights per output channel (symmetric int8), activations uint8 per tensor, the
product exact in int32 (quant.int_mm), then y = s_x s_w (acc - z_x sum_k q_w) + b.]])
doc('nn.quantized.Conv2d', 'nn.quantized.Conv2d.from_float(conv [, {scale=, zero_point=}])',
  [[An int8 Conv2d (groups 1): the image quantized, channels last, padded with the zero point's code; each
window one row of a strided view of the bytes (x:as_strided), then the int8 product as nn.quantized.Linear.]])
doc('F.conv2d', "F.conv2d(x, w [, b [, {stride=, padding=, dilation=, groups=, algo='auto'|'im2col'|'winograd'}]]) -> Tensor",
  [[2-D convolution (cross-correlation, as PyTorch): x (N, C, H, W), w (K, C/groups, R, S), b (K).
algo: 'im2col' (im2col + matmul, any layer), 'winograd' (Winograd F(2x2, 3x3): 3x3 kernels, stride 1,
dilation 1, groups 1 only; float32 within a few ulp of the sums of a direct convolution), 'auto' (the
default: Winograd where it applies to float32 with >= 8 input channels on a SIMD path, else im2col).]])
doc('F.silu', 'F.silu(x) -> Tensor', [[x * sigmoid(x), the swish activation of diffusion U-Nets.]])
doc('F.group_norm', 'F.group_norm(x, num_groups [, weight [, bias [, eps = 1e-5]]]) -> Tensor',
  [[Group normalisation (Wu & He): x (N, C, ...) split into num_groups groups of C/num_groups channels;
each sample's group normalised to mean 0, variance 1 (biased), then weight and bias (C) per channel.]])
doc('F.conv_transpose2d', "F.conv_transpose2d(x, w [, b [, {stride=, padding=, output_padding=, dilation=, groups=}]]) -> Tensor",
  [[The transposed convolution, conv2d's adjoint with respect to its input: x (N, C, H, W), w (C, K/groups,
R, S) -> (N, K, (H-1) stride - 2 padding + dilation (R-1) + output_padding + 1, ...). Computed as w^T x
per group and col2im (overlapping windows summed); differentiable in x, w and b.]])
doc('F.max_pool2d', 'F.max_pool2d(x, k [, {stride=, padding=, return_indices=}]) -> y [, indices]',
  [[The maximum of each k x k window (stride k by default) of x (N, C, H, W).]])
doc('F.avg_pool2d', 'F.avg_pool2d(x, k [, {stride=, padding=}]) -> Tensor', [[The mean of each k x k window.]])
doc('F.adaptive_avg_pool2d', 'F.adaptive_avg_pool2d(x, output_size) -> Tensor', [[x (N, C, H, W) or (C, H, W) averaged to
output_size (an integer or {h, w}; nil keeps that dim): output cell i of O over a dim of size I averages input
rows floor(iI/O) .. ceil((i+1)I/O) - 1 (0-based; windows overlap when O does not divide I), as PyTorch. Output
size 1 is global average pooling. Computed as two matmuls with averaging matrices (exact gradients).]])
doc('F.interpolate', "F.interpolate(x, {size= | scale_factor=, mode='nearest'|'bilinear', align_corners=}) -> Tensor",
  [[x (N, C, H, W) or (C, H, W) resampled to size (an integer or {h, w}) or by scale_factor (a number or a pair;
output floor(H * f)), as PyTorch: nearest takes source min(floor(dst * s), I - 1) with s = I / O (1 / f when a
scale factor is given); bilinear weighs the two nearest sources at (dst + 0.5) s - 0.5 (clamped at 0), or at
dst (I - 1) / (O - 1) with align_corners = true. Separable: two matmuls with resampling matrices.]])
doc('F.relu', 'F.relu(x) -> Tensor', [[max(x, 0) elementwise.]])
doc('F.leaky_relu', 'F.leaky_relu(x [, negative_slope = 0.01]) -> Tensor', [[x where positive, negative_slope * x elsewhere.]])
doc('F.gelu', "F.gelu(x [, {approximate='none'|'tanh'}]) -> Tensor", [[x * Phi(x), exact by default; {approximate='tanh'} uses the tanh formula.]])
doc('F.sigmoid', 'F.sigmoid(x) -> Tensor', [[1 / (1 + e^-x) elementwise.]])
doc('F.tanh', 'F.tanh(x) -> Tensor', [[The hyperbolic tangent elementwise.]])
doc('F.softmax', 'F.softmax(x [, dim = -1]) -> Tensor', [[exp(x) normalised to sum 1 along dim.]])
doc('F.log_softmax', 'F.log_softmax(x [, dim = -1]) -> Tensor', [[log(softmax(x)) along dim, computed stably.]])
doc('F.cross_entropy', 'F.cross_entropy(logits, target [, {reduction=, label_smoothing=}]) -> Tensor',
  [[The cross-entropy of logits (N, C) against 1-based class indices target (N); reduction
'mean' (default), 'sum' or 'none'.]])
doc('F.nll_loss', 'F.nll_loss(logp, target [, {reduction=}]) -> Tensor', [[The negative log-likelihood of log-probabilities logp (N, C) at 1-based targets.]])
doc('F.mse_loss', 'F.mse_loss(x, y [, {reduction=}]) -> Tensor', [[The mean squared error.]])
doc('F.binary_cross_entropy', 'F.binary_cross_entropy(p, y [, {reduction=}]) -> Tensor', [[The binary cross-entropy of probabilities p against targets y in [0, 1].]])
doc('F.dropout', 'F.dropout(x [, p = 0.5 [, training = true]]) -> Tensor', [[Zeroes each element with probability p and scales the rest by 1 / (1 - p) when training.]])
doc('F.layer_norm', 'F.layer_norm(x, normalized_shape [, w [, b [, eps = 1e-5]]]) -> Tensor', [[Normalises over the last dims (normalized_shape) to mean 0 and variance 1, then scales by w and shifts by b.]])
doc('F.batch_norm', 'F.batch_norm(x, running_mean, running_var [, w, b, training = false, momentum = 0.1, eps = 1e-5]) -> Tensor',
  [[Normalises each channel (dim 2) with batch statistics when training (updating the running
ones), else with the running statistics.]])
doc('F.embedding', 'F.embedding(idx, w) -> Tensor', [[The rows of w (n, d) at the 1-based indices idx: shape idx.shape .. {d}.]])
doc('F.pad', 'F.pad(x, pads [, value = 0]) -> Tensor', [[x padded with value: pads = {left, right [, top, bottom, ...]}, last dim first. Negative pads crop, as in PyTorch: F.pad(x, {-1, -1}) drops the first and last column.]])
doc('F.scaled_dot_product_attention', 'F.scaled_dot_product_attention(q, k, v [, {attn_mask=, dropout_p=0, is_causal=false, scale=}]) -> Tensor',
  [[Attention as PyTorch 2's: softmax(q k^T * scale + mask) v with q (..., L, E), k (..., S, E),
v (..., S, Ev) -> (..., L, Ev) (batch dims broadcast) and scale = 1 / sqrt(E) by default. A boolean
(uint8) attn_mask says where a query MAY attend (1 = take part, 0 = -inf: the opposite of
nn.MultiheadAttention's convention); a float one (q's dtype) is added; either broadcasts to
(..., L, S). is_causal applies the lower-triangular mask (not together with attn_mask). dropout_p > 0
drops attention weights (always: there is no training flag, as in PyTorch). Composed from tensor
ops: autograd gives the gradients.]])
doc('F.one_hot', 'F.one_hot(index [, num_classes]) -> Tensor', [[As lm.one_hot.]])

-- ---------------------------------------------------------------- nn

doc('nn.Module', "nn.Module  (a new module: local Net = nn.Module:extend('Net'))",
  [[The base of every module. m(x) calls m:forward(x). Assigning a tensor that requires grad to a
field of a module registers a parameter, assigning a module registers a child (both then read as
fields: lin.weight, model.fc); self:register_buffer(name, t) registers a buffer (kept in
state_dict, not trained). A new module: local Net = nn.Module:extend('Net'); function
Net:__init(...) self.fc = nn.Linear(4, 2) end; function Net:forward(x) return self.fc(x) end; then
Net(...) makes one. tostring(m) is an indented tree with each layer's shapes and parameter counts.
Children of a Sequential are named '1', '2', ... (1-based), so state_dict keys read '1.weight'.]])
local module_methods = {
  forward = { 'm:forward(...) -> output', 'Computes the module\'s output (m(...) calls it).' },
  parameters = { 'm:parameters() -> {tensors}', 'Every parameter of m and its children, in a stable order (its own first, then each child\'s), each once: what an optimizer takes.' },
  named_parameters = { 'm:named_parameters() -> {name = tensor}', "The parameters by dotted name ('1.weight', 'fc.bias'); pairs() walks them in order." },
  buffers = { 'm:buffers() -> {tensors}', 'Every buffer (running statistics) of m and its children.' },
  named_buffers = { 'm:named_buffers() -> {name = tensor}', 'The buffers by dotted name, in order.' },
  children = { 'm:children() -> {modules}', 'The direct sub-modules, in order.' },
  named_children = { 'm:named_children() -> {name = module}', 'The direct sub-modules by name, in order.' },
  modules = { 'm:modules() -> {modules}', 'm and every module under it (pre-order), each once.' },
  named_modules = { 'm:named_modules() -> {name = module}', "m (named '') and every module under it by dotted name." },
  train = { 'm:train([mode = true]) -> m', 'Training mode for m and every child (dropout active, batch norm uses and updates batch statistics).' },
  eval = { 'm:eval() -> m', 'Evaluation mode for m and every child (dropout off, batch norm uses its running statistics).' },
  zero_grad = { 'm:zero_grad([{set_to_none=true}])', 'Clears the .grad of every parameter (to nil; {set_to_none=false} zeroes them in place).' },
  state_dict = { 'm:state_dict() -> {name = tensor}', "Parameters and buffers by PyTorch's names with 1-based indices ('1.weight', 'bn.running_mean', 'bn.num_batches_tracked'), as detached tensors sharing the module's storage; lm.save(path, m:state_dict()) writes them." },
  load_state_dict = { 'm:load_state_dict(t [, {strict=true}]) -> {missing_keys=, unexpected_keys=}', 'Copies tensors from a state_dict into m in place (optimizers keep working). Missing or unexpected keys (strict) and shape mismatches (always) are an error listing every one.' },
  to = { "m:to('float32'|'float64'|'cpu'|'cuda') -> m", "Converts floating parameters and buffers to a dtype (replacing the parameters: call it before making the optimizer); 'cuda' says why it is not available." },
  float = { 'm:float() -> m', "m:to('float32')." },
  double = { 'm:double() -> m', "m:to('float64')." },
  requires_grad_ = { 'm:requires_grad_([flag = true]) -> m', 'Sets requires_grad of every parameter (false freezes them).' },
  apply = { 'm:apply(fn) -> m', 'Calls fn(module) for m and every module under it.' },
  register_buffer = { 'm:register_buffer(name, t [, persistent = true])', 'Registers a tensor kept with the module and in state_dict (unless persistent is false) but not trained.' },
  register_parameter = { 'm:register_parameter(name, t)', 'Registers t (a tensor that requires grad, or nil for an absent one such as bias=false).' },
  add_module = { 'm:add_module(name, child) -> child', 'Registers a child module under name.' },
  extend = { "nn.Module:extend(name) -> class", "A subclass named name (also of a layer: nn.Linear:extend('MyLinear')); define Class:__init(...) and Class:forward(...), then call Class(...) to make one." },
  extra_repr = { 'm:extra_repr() -> string', 'What tostring shows inside Name(...); override it in a new module.' },
}
for name, d in pairs(module_methods) do doc('nn.Module:' .. name, d[1], d[2]) end
local layers = {
  Sequential = { 'nn.Sequential(m1, m2, ...)', "Applies the modules in order; its children are m[1], m[2], ... named '1', '2', ...; #m counts them and m:append(x) adds one." },
  ModuleList = { 'nn.ModuleList({m1, m2, ...})', 'Holds modules (their parameters count) without a forward of its own: list[i], #list, list:append(m).' },
  Linear = { 'nn.Linear(in, out [, {bias=true, dtype=}])', 'y = x W^T + b with W (out, in), initialised as PyTorch: kaiming_uniform (a = sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in)), and b from the same range.' },
  Conv2d = { "nn.Conv2d(in, out, k [, {stride=1, padding=0|'same'|'valid', dilation=1, groups=1, bias=true}])", 'A 2-D convolution layer over (N, C, H, W) inputs; weight (out, in/groups, kh, kw) initialised as PyTorch (kaiming_uniform a = sqrt(5), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))).' },
  ConvTranspose2d = { "nn.ConvTranspose2d(in, out, k [, {stride=1, padding=0, output_padding=0, dilation=1, groups=1, bias=true}])", "The transposed convolution (conv2d's adjoint) as a layer: it upsamples, as a DCGAN's generator does; weight (in, out/groups, kh, kw) initialised as PyTorch; m(x, output_size) picks the output_padding that gives output_size." },
  GroupNorm = { 'nn.GroupNorm(num_groups, num_channels [, {eps=1e-5, affine=true}])', "F.group_norm as a layer: each sample's groups of channels normalised (a diffusion U-Net's norm: it does not depend on the batch); weight ones, bias zeros." },
  MaxPool2d = { 'nn.MaxPool2d(k [, stride [, {padding=}]])', 'Max pooling over k x k windows (stride k by default).' },
  AdaptiveAvgPool2d = { 'nn.AdaptiveAvgPool2d(output_size)', 'F.adaptive_avg_pool2d as a module: any input size to output_size (an integer or {h, w}); AdaptiveAvgPool2d(1) is global average pooling.' },
  Upsample = { "nn.Upsample({size= | scale_factor=, mode='nearest'|'bilinear', align_corners=})", 'F.interpolate as a module (no parameters).' },
  AvgPool2d = { 'nn.AvgPool2d(k [, stride [, {padding=}]])', 'Average pooling over k x k windows (stride k by default).' },
  ReLU = { 'nn.ReLU()', 'The activation max(x, 0) as a module.' },
  SiLU = { 'nn.SiLU()', 'The activation x * sigmoid(x) (swish) as a module, as diffusion U-Nets use.' },
  LeakyReLU = { 'nn.LeakyReLU([negative_slope = 0.01])', 'max(x, 0) + negative_slope min(x, 0) as a module.' },
  Sigmoid = { 'nn.Sigmoid()', 'The logistic sigmoid 1 / (1 + e^-x) as a module.' },
  Tanh = { 'nn.Tanh()', 'The hyperbolic tangent as a module.' },
  GELU = { "nn.GELU([{approximate='none'|'tanh'}])", 'The GELU activation x * Phi(x) as a module.' },
  Softmax = { 'nn.Softmax([dim = -1])', 'Softmax along dim (1-based) as a module.' },
  LogSoftmax = { 'nn.LogSoftmax([dim = -1])', 'log(softmax(x)) along dim (1-based), computed stably, as a module.' },
  Flatten = { 'nn.Flatten([start_dim = 2 [, end_dim = -1]])', 'Merges dims start_dim..end_dim (1-based; the default keeps the batch dim, like PyTorch\'s start_dim=1).' },
  Dropout = { 'nn.Dropout([p = 0.5])', 'Zeroes each element with probability p in training mode and scales the rest by 1 / (1 - p); the identity in eval mode.' },
  BatchNorm1d = { 'nn.BatchNorm1d(n [, {eps=1e-5, momentum=0.1, affine=true, track_running_stats=true}])', 'Batch normalisation of (N, n) or (N, n, L) inputs: batch statistics in training (updating running_mean and running_var), the running ones in eval.' },
  BatchNorm2d = { 'nn.BatchNorm2d(c [, {eps=1e-5, momentum=0.1, affine=true, track_running_stats=true}])', 'Batch normalisation of (N, c, H, W) inputs per channel, as BatchNorm1d.' },
  LayerNorm = { 'nn.LayerNorm(shape [, {eps=1e-5, elementwise_affine=true, bias=true}])', 'Layer normalisation over the last dim(s) (a number or a table), with learned scale and shift (bias=false: scale only).' },
  Embedding = { 'nn.Embedding(n, d)', 'A table of n learned d-vectors (initialised N(0, 1)) looked up by 1-based int64 indices.' },
  Residual = { 'nn.Residual(m)', 'A skip connection around m: its output is x + m(x) (m must keep the shape).' },
  Identity = { 'nn.Identity()', 'A module that returns its input unchanged.' },
  RNN = { "nn.RNN(input_size, hidden_size [, {num_layers=1, nonlinearity='tanh'|'relu', bias=true, batch_first=false, dropout=0, bidirectional=false, dtype=}])", 'An Elman recurrent layer over sequences, as PyTorch: h_t = act(x_t W_ih^T + b_ih + h_(t-1) W_hh^T + b_hh). rnn(input [, h0]) -> output, h_n with input (seq, batch, input_size) ((batch, seq, ...) with batch_first, or unbatched (seq, input_size)), h0 and h_n (num_layers * D, batch, hidden_size) (D = 2 when bidirectional), output (seq, batch, D * hidden_size). Parameters weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, ..._reverse, from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)); dropout between layers in training mode only.' },
  LSTM = { 'nn.LSTM(input_size, hidden_size [, {num_layers=1, bias=true, batch_first=false, dropout=0, bidirectional=false, dtype=}])', "A long short-term memory layer over sequences, as PyTorch (gates i, f, g, o: c_t = f c_(t-1) + i g, h_t = o tanh(c_t)). lstm(input [, {h0, c0}]) -> output, {h_n, c_n}; shapes, parameter names and options as nn.RNN, with weights (4 * hidden_size, ...)." },
  GRU = { 'nn.GRU(input_size, hidden_size [, {num_layers=1, bias=true, batch_first=false, dropout=0, bidirectional=false, dtype=}])', "A gated recurrent unit layer over sequences, as PyTorch (gates r, z, n: n = tanh(W_in x + b_in + r (W_hn h + b_hn)), h_t = (1 - z) n + z h_(t-1)). gru(input [, h0]) -> output, h_n; shapes, parameter names and options as nn.RNN, with weights (3 * hidden_size, ...)." },
  RNNCell = { "nn.RNNCell(input_size, hidden_size [, {bias=true, nonlinearity='tanh'|'relu', dtype=}])", "One step of nn.RNN: cell(x [, h]) -> h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), x (batch, input_size) or (input_size), h zeros when left out. Parameters weight_ih, weight_hh, bias_ih, bias_hh from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))." },
  LSTMCell = { 'nn.LSTMCell(input_size, hidden_size [, {bias=true, dtype=}])', "One step of nn.LSTM: cell(x [, {h, c}]) -> h', c' (two values), gates i, f, g, o in weight_ih (4 * hidden_size, input_size)." },
  GRUCell = { 'nn.GRUCell(input_size, hidden_size [, {bias=true, dtype=}])', "One step of nn.GRU: cell(x [, h]) -> h', gates r, z, n in weight_ih (3 * hidden_size, input_size)." },
  MultiheadAttention = { 'nn.MultiheadAttention(embed_dim, num_heads [, {dropout=0, bias=true, batch_first=false, kdim=, vdim=, dtype=}])', "Attention with num_heads heads of embed_dim / num_heads each, as PyTorch: mha(query, key, value [, {key_padding_mask=, need_weights=true, attn_mask=, average_attn_weights=true, is_causal=false}]) -> attn_output, attn_weights. query (L, N, E) ((N, L, E) with batch_first, or unbatched (L, E)), key (S, N, kdim), value (S, N, vdim); attn_output has query's shape; attn_weights (N, L, S) averaged over the heads, (N, H, L, S) with average_attn_weights=false, nil with need_weights=false. Masks: a boolean (uint8) attn_mask (L, S) or (N*H, L, S) and key_padding_mask (N, S) say what is NOT allowed (1 = masked out, PyTorch's convention for this module, the opposite of F.scaled_dot_product_attention's); a float mask is added to the scores; is_causal without attn_mask masks the future. Parameters in_proj_weight (3E, E) (q_proj_weight, k_proj_weight, v_proj_weight when kdim or vdim differ from E) from xavier_uniform_, in_proj_bias (3E) zero, out_proj an nn.Linear with a zero bias; dropout on the attention weights in training mode only." },
  TransformerEncoderLayer = { "nn.TransformerEncoderLayer(d_model, nhead [, {dim_feedforward=2048, dropout=0.1, activation='relu'|'gelu', layer_norm_eps=1e-5, batch_first=false, norm_first=false, bias=true, dtype=}])", "Self-attention and a feed-forward block (linear1, activation, dropout, linear2), each with a residual, dropout and a layer norm, as PyTorch: layer(src [, {src_mask=, src_key_padding_mask=, is_causal=false}]) -> output of src's shape (masks as nn.MultiheadAttention's: 1 = masked out). Post-norm (x = norm1(x + sa(x)); x = norm2(x + ff(x))) by default, pre-norm (x = x + sa(norm1(x)); x = x + ff(norm2(x))) with norm_first. Children self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2, so a state_dict has PyTorch's keys." },
  TransformerDecoderLayer = { "nn.TransformerDecoderLayer(d_model, nhead [, options as TransformerEncoderLayer])", "Self-attention, cross-attention over the encoder's output and a feed-forward block, each with a residual, dropout and a layer norm, as PyTorch: layer(tgt, memory [, {tgt_mask=, memory_mask=, tgt_key_padding_mask=, memory_key_padding_mask=, tgt_is_causal=false, memory_is_causal=false}]) -> output of tgt's shape. Children self_attn, multihead_attn, linear1, dropout, linear2, norm1, norm2, norm3, dropout1, dropout2, dropout3 (PyTorch's names); norm_first for pre-norm." },
  CrossEntropyLoss = { "nn.CrossEntropyLoss([{reduction='mean', label_smoothing=0}])", 'log_softmax + NLL of logits (N, C) against 1-based int64 class indices (N): the module form of F.cross_entropy.' },
  MSELoss = { "nn.MSELoss([{reduction='mean'}])", 'The mean squared error: the module form of F.mse_loss.' },
  NLLLoss = { "nn.NLLLoss([{reduction='mean'}])", 'The negative log-likelihood of log-probabilities at 1-based targets: the module form of F.nll_loss.' },
  BCELoss = { "nn.BCELoss([{reduction='mean'}])", 'The binary cross-entropy of probabilities in [0, 1]: the module form of F.binary_cross_entropy.' },
  BCEWithLogitsLoss = { "nn.BCEWithLogitsLoss([{reduction='mean', pos_weight=}])", 'Sigmoid and binary cross-entropy in one stable op on logits: the module form of F.binary_cross_entropy_with_logits.' },
}
for name, d in pairs(layers) do doc('nn.' .. name, d[1], d[2]) end
doc('nn.is_module', 'nn.is_module(v) -> boolean', [[True when v is a module (an instance of nn.Module or a subclass).]])
local inits = {
  kaiming_uniform_ = { "nn.init.kaiming_uniform_(w [, a = 0 [, mode = 'fan_in' [, nonlinearity = 'leaky_relu']]]) -> w", 'U(-b, b) with b = gain * sqrt(3 / fan) (He et al.); the options may also be a table {a=, mode=, nonlinearity=}. Linear and Conv2d use a = sqrt(5).' },
  kaiming_normal_ = { "nn.init.kaiming_normal_(w [, a [, mode [, nonlinearity]]]) -> w", 'N(0, std^2) with std = gain / sqrt(fan).' },
  xavier_uniform_ = { 'nn.init.xavier_uniform_(w [, gain = 1]) -> w', 'U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio).' },
  xavier_normal_ = { 'nn.init.xavier_normal_(w [, gain = 1]) -> w', 'N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).' },
  normal_ = { 'nn.init.normal_(w [, mean = 0 [, std = 1]]) -> w', 'Fills w with normal random numbers.' },
  uniform_ = { 'nn.init.uniform_(w [, a = 0 [, b = 1]]) -> w', 'Fills w with uniform random numbers in [a, b).' },
  constant_ = { 'nn.init.constant_(w, v) -> w', 'Fills w with v.' },
  zeros_ = { 'nn.init.zeros_(w) -> w', 'Fills w with zeros.' },
  ones_ = { 'nn.init.ones_(w) -> w', 'Fills w with ones.' },
  eye_ = { 'nn.init.eye_(w) -> w', 'The identity matrix (2-D w).' },
  calculate_gain = { 'nn.init.calculate_gain(nonlinearity [, param]) -> number', "The recommended gain: 1 (linear, sigmoid), 5/3 (tanh), sqrt(2) (relu), sqrt(2 / (1 + slope^2)) (leaky_relu)." },
}
for name, d in pairs(inits) do doc('nn.init.' .. name, d[1], d[2]) end
topic('nn.utils', [[What a training loop needs beside the model: gradient clipping, a progress bar, a CSV
metrics log and a deferred Ctrl-C (examples/fashion_train.lua uses them all).]])
doc('nn.utils.clip_grad_norm_', 'nn.utils.clip_grad_norm_(params, max_norm [, norm_type = 2]) -> total_norm',
  [[Scales the gradients of params (a table of tensors or a module) in place so that their joint norm
is at most max_norm; returns the norm before clipping (in C, one pass per gradient). Also
optim.clip_grad_norm_.]])
doc('nn.utils.Progress', "nn.utils.Progress{total=, title=, stream=io.stdout, every=10, silent=false} -> bar",
  [[A progress bar: bar:update(n_samples, loss) per batch shows title, batch/total, samples/s, the
running loss and the ETA on one line redrawn in place on a terminal (plain lines every `every`
seconds otherwise; silent only counts); bar:done() ends it and returns the mean loss and the
seconds.]])
doc('nn.utils.MetricsLog', 'nn.utils.MetricsLog(path) -> log',
  [[A CSV log with the header step,epoch,loss,accuracy,lr,seconds,split; log:write{step=, epoch=,
loss=, accuracy=, lr=, split='train'|'test'} adds a row and flushes it (a live reader can follow
the file); log:close().]])
doc('nn.utils.catch_interrupt', 'nn.utils.catch_interrupt() -> guard',
  [[While the guard is open, Ctrl-C only sets guard:requested(), so a training loop can stop between
two steps with the model and optimizer intact; a second Ctrl-C interrupts as usual. guard:close()
(or local guard <close> = ...) ends it.]])
doc('F.binary_cross_entropy_with_logits', "F.binary_cross_entropy_with_logits(x, y [, {reduction=, pos_weight=}]) -> Tensor",
  [[Binary cross-entropy on logits, stable for any x: (1 - y) x + w softplus(-x) with
w = 1 + (pos_weight - 1) y (pos_weight broadcast along the last dims).]])

-- ---------------------------------------------------------------- optim

doc('optim.LBFGS', "optim.LBFGS(params, {lr=1, max_iter=20, max_eval=max_iter*5//4, tolerance_grad=1e-7, tolerance_change=1e-9, history_size=100, line_search_fn=nil|'strong_wolfe'}) -> opt",
  [[L-BFGS as torch.optim.LBFGS, over the flat vector of all the parameters (one parameter group
only). opt:step(closure) needs the closure: a function that zeroes the grads, computes the loss,
calls loss:backward() and returns the loss; it may run up to max_eval times per step (with grad
mode on), and step returns what it first returned. Each step runs up to max_iter iterations: the
direction from the last history_size gradient and step pairs (the two-loop recursion), then a move
of lr (the very first min(1, 1/|g|_1) lr), or with line_search_fn='strong_wolfe' a step meeting
the strong Wolfe conditions (cubic interpolation, at most 25 evaluations). It stops early when
max |g| <= tolerance_grad, or when the step or the loss changes by less than tolerance_change.
The state (d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, prev_loss, n_iter, func_evals)
is kept in opt.state[<first parameter>] and carries over from one step to the next.]])
doc('optim.SGD', 'optim.SGD(params, {lr=, momentum=0, dampening=0, weight_decay=0, nesterov=false, maximize=false})',
  [[Stochastic gradient descent with optional momentum (buffer = momentum buffer + (1 - dampening)
g), Nesterov momentum and weight decay, as torch.optim.SGD; lr is required. One fused C pass per
parameter.]])
doc('optim.Adam', 'optim.Adam(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0, amsgrad=false})',
  [[Adam: steps from bias-corrected running averages of the gradient and its square (amsgrad keeps
their maximum); weight_decay adds weight_decay p to the gradient. One fused C pass per parameter.]])
doc('optim.AdamW', 'optim.AdamW(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=1e-2, amsgrad=false})',
  [[Adam with decoupled weight decay: p is multiplied by 1 - lr weight_decay before the Adam step.]])
doc('optim.RMSprop', 'optim.RMSprop(params, {lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=false})',
  [[RMSprop: steps divided by the root of a running average of squared gradients (centered:
minus the squared running mean), with optional momentum.]])
doc('optim.Optimizer', 'optim.Optimizer',
  [[The base of the optimizers. opt.param_groups is an array of groups {params=, lr=, ...} (each with
its own hyperparameters, changeable between steps); opt.state holds each parameter's buffers.
params may also be an array of groups: optim.SGD({{params = a, lr = 0.1}, {params = b}}, {lr=0.01}).]])
doc('optim.Optimizer:step', 'opt:step([closure]) -> loss', [[Updates every parameter that has a .grad (a parameter without one is skipped); closure, if given, is called first and its loss returned.]])
doc('optim.Optimizer:zero_grad', 'opt:zero_grad([{set_to_none=true}])', [[Clears the .grad of every parameter.]])
doc('optim.Optimizer:state_dict', 'opt:state_dict() -> {state=, param_groups=}', [[The hyperparameters and the per-parameter state (copies), parameters numbered from 1 across the groups.]])
doc('optim.Optimizer:load_state_dict', 'opt:load_state_dict(sd)', [[Restores hyperparameters and state saved by opt:state_dict() into an optimizer over parameters of the same shapes.]])
doc('optim.Optimizer:add_param_group', 'opt:add_param_group({params=, lr=, ...})', [[Adds a group; missing hyperparameters come from the optimizer's defaults.]])
doc('optim.clip_grad_norm_', 'optim.clip_grad_norm_(params, max_norm [, norm_type = 2]) -> total_norm', [[As nn.utils.clip_grad_norm_.]])
doc('optim.lr_scheduler.StepLR', 'optim.lr_scheduler.StepLR(opt, {step_size=, gamma=0.1})', [[Multiplies each group's lr by gamma every step_size epochs (sch:step() once per epoch).]])
doc('optim.lr_scheduler.MultiStepLR', 'optim.lr_scheduler.MultiStepLR(opt, {milestones={...}, gamma=0.1})', [[Multiplies the lr by gamma at each milestone epoch.]])
doc('optim.lr_scheduler.ExponentialLR', 'optim.lr_scheduler.ExponentialLR(opt, {gamma=})', [[Multiplies the lr by gamma every epoch.]])
doc('optim.lr_scheduler.CosineAnnealingLR', 'optim.lr_scheduler.CosineAnnealingLR(opt, {T_max=, eta_min=0})', [[Anneals the lr from its initial value to eta_min along a cosine over T_max epochs (PyTorch's recursive form).]])
doc('optim.lr_scheduler.LambdaLR', 'optim.lr_scheduler.LambdaLR(opt, fn)', [[Sets each group's lr to initial_lr * fn(epoch), epoch counting steps from 0 (fn may be a table of one function per group).]])
doc('optim.lr_scheduler.LRScheduler:step', 'sch:step()', [[Advances one epoch and sets each group's lr.]])
doc('optim.lr_scheduler.LRScheduler:get_last_lr', 'sch:get_last_lr() -> {lr, ...}', [[The learning rates the last step set, one per parameter group.]])

-- ---------------------------------------------------------------- data

doc('data.FashionMNIST', "data.FashionMNIST{split='train'|'test' [, root=, normalize=false|true|{mean, std}, limit=]}",
  [[Fashion-MNIST read once from its IDX files (gzip, streamed) into two tensors: images (N, 1, 28,
28) float32 in [0, 1] (normalize=true: (x - 0.2860) / 0.3530) and 1-based int64 labels (N); ds[i]
ds:get(i) -> x, y (ds[i] -> {x, y}); ds.classes names them. The default root is /usr/share/datasets/fashion-mnist
(Debian's dataset-fashion-mnist); a missing file is an error that says how to install it.]])
doc('data.MNIST', "data.MNIST{split='train'|'test', root= [, normalize=, limit=]}", [[MNIST in the same IDX format, from a given root (no Debian package holds it).]])
doc('data.TensorDataset', 'data.TensorDataset(x, y, ...)', [[A data set of the rows of tensors of equal length along dim 1: #ds, ds:get(i) -> x[i], y[i]; ds[i] -> {x[i], y[i]} (PyTorch's tuple as a table: Lua's indexing gives one value).]])
doc('data.DataLoader', 'data.DataLoader(ds, {batch_size=1, shuffle=false, drop_last=false, seed=, transform=})',
  [[Batches of a data set: for x, y in loader:iter() do ... end. Each batch is gathered in C by
index from the data set's tensors; with shuffle, the order is a Philox permutation keyed by seed
(the same batches on every run; without a seed, drawn from lm.manual_seed's generator); transform
(e.g. data.Compose{...}) runs on each whole batch; #loader is the number of batches.]])
doc('data.DataLoader:iter', 'loader:iter() -> iterator', [[Iterates over one epoch of batches (reshuffled each epoch when shuffle=true).]])
doc('data.TextFile', 'data.TextFile(path [, {limit_bytes=}]) -> tf',
  [[A UTF-8 text file read once: tf.text, tf.path, tf.bytes, tf.chars (#tf). An empty file, a NUL
byte or an invalid UTF-8 sequence is an error naming the byte offset; limit_bytes reads the first
bytes, cut back to a whole character.]])
doc('data.CharDataset', "data.CharDataset(text or TextFile, {block_size= [, split='train'|'val'|'all', val_fraction=0.1, seed=]})",
  [[Characters as tokens (UTF-8: a Chinese character is one): ds.vocab (sorted by code point),
ds.vocab_size, ds.stoi; 1-based int64 ids. split='train' is the first 90% of the text, 'val' the
last 10% (by position: no overlap). #ds windows of block_size; ds[i] -> {x, y}, ds:get(i) -> x, y
(y one character on); data.DataLoader(ds, ...) batches it in C too.]])
doc('data.CharDataset:batch', 'ds:batch(batch_size [, seed]) -> x, y',
  [[(batch_size, block_size) int64 windows at random starts, y = x one character on, gathered with one
index_select each. Starts from seed, else the data set's own generator (made with seed=), else
Lumen's (lm.manual_seed).]])
doc('data.CharDataset:encode', 'ds:encode(str) -> Tensor (int64)',
  [[The 1-based ids of str's characters; a character outside the vocabulary is an error naming it,
its code point and its position.]])
doc('data.CharDataset:decode', 'ds:decode(ids) -> string',
  [[The characters of ids (a 1-D tensor, a table or one integer); a 2-D tensor gives a table of
strings, one per row.]])
doc('data.Corpus', "data.Corpus(name [, {root=, limit_bytes=}]) -> TextFile",
  [[A named corpus from Debian's fortune packages (/usr/share/games/fortunes, installed by ./run.sh
and ./test.sh): 'fortunes' (English), 'tang' (the 300 Tang poems), 'fortunes-zh' (Chinese
fortunes), 'song' (100 Song ci). Records joined by blank lines; colour escapes and backspace
overstrikes removed. A missing package is an error saying what to apt-get install.]])
doc('data.Normalize', 'data.Normalize(mean, std)', [[A batch transform: (x - mean) / std per channel (numbers or tables of one per channel).]])
doc('data.RandomCrop', 'data.RandomCrop(size [, {padding=0}])', [[A batch transform: each image zero-padded by padding and cropped to size at a random place.]])
doc('data.RandomHorizontalFlip', 'data.RandomHorizontalFlip([p = 0.5])', [[A batch transform: each image mirrored left-right with probability p.]])
doc('data.Compose', 'data.Compose({t1, t2, ...})', [[The batch transforms applied in order.]])

-- ---------------------------------------------------------------- kernels

-- The signature and options of each kernels call come from the table the binding checks options
-- against (src/lua/kernel_opts.c, lm._kernels.options), so an option help lists is one the binding
-- takes; show_entry prints the options with their values and defaults, and the counters a run gives
-- (measured by running the call on kernels.samples). Only the paragraphs are written here.
local KSPEC = (lm._kernels and lm._kernels.options) or {}
local function kdoc(name, ret, text)
  local spec, keys = KSPEC[name], {}
  for _, o in ipairs(spec or {}) do keys[#keys + 1] = o.key .. '=' end
  local args = spec and spec.args or ''
  local sig = string.format('kernels.%s(%s%s{%s}]) -> %s', name, args, args ~= '' and ' [, ' or '[',
    table.concat(keys, ', '), ret)
  E['kernels.' .. name] = { sig = sig, doc = text, kernel = name }
end
kdoc('reduce', 'out, info',
  [[A parallel sum reduction as in the course: naive (divergent), convergent and shared-memory
trees, and a coarsened one (several elements per thread first). out is a 0-d tensor of x's dtype.]])
doc('kernels.latency', "kernels.latency([{global=, shared=, constant=, arith=, barrier=, sms=, issue=, sector=, warps_per_sm=, blocks_per_sm=, shared_per_sm=} | 'default']) -> model",
  [[The emulator's latency model, from which modelled_cycles are computed: latencies in cycles
(global, shared, constant per distinct address, arith, barrier), the SM's issue cycles per warp
instruction and replay (issue) and per 32-byte sector of global memory (sector), the resident
warps, blocks and shared bytes per SM (occupancy) and the SMs. Given a table, changes those
fields; 'default' restores the defaults. Returns the model now in force; every emulated info says
it in info.model (docs/trace.md: what it counts, what it ignores).]])
kdoc('scan', 'out, info',
  [[A parallel prefix sum of a 1-D x: Kogge-Stone (log2 n steps, one element per thread), Brent-Kung
(two per thread, 2 log2 n - 1 steps) or hierarchical for long inputs.]])
kdoc('histogram', 'counts, info',
  [[A parallel histogram with global atomics, privatised (shared-memory) copies, or aggregated
runs; counts is an int64 tensor of bins counts. The input is a Lua string (byte b falls in bin
b * bins // 256) or a uint8/int32 tensor of bin indices 0..bins-1.]])
kdoc('matmul', 'out, info',
  [[The course's matrix product of two matrices, naive (every operand from global memory) or with
shared-memory tiles of tile x tile (loads counted in info.counters show what tiling saves). The cpu
run of 'tiled' blocks C into tile_m x tile_n cache tiles, k in slices of tile_k (each defaults to
tile), its three tile loops in any order ('ijk' ... 'kji'); every tiling and order gives the same
bits. lm.tune searches these knobs.]])
kdoc('conv2d', 'out, info',
  [[A 2-D convolution of img with a small mask: naive, the mask in constant memory, and tiled
versions that load input tiles with their halo cells into shared memory. The cpu run (one for
every algo) computes output tiles of tile_h x tile_w (default: a whole row each) with its loops in
one of three orders; every tiling and order gives the same bits. lm.tune searches these knobs.]])
doc('kernels.cpu_info', 'kernels.cpu_info() -> {isa=, cpu=, threads=}',
  [[What a cpu run's measured time depends on: the SIMD path Lumen's loops take now ('scalar',
'avx2', 'avx512'; LUMEN_ISA), the CPU's model and the threads. lm.tune keys its cache by them.]])
doc('lm.tune', "lm.tune(op, x1, x2 [, {backend='cpu'|'emu', repeats=5, budget_s=, cache=path|false, refresh=, search='staged'|'grid', tiles=, verbose=}]) -> winner, list",
  [[Operator-level autotuning (AICS ch. 5): op 'matmul' (x1, x2 = a, b) or 'conv2d' (img, mask).
backend 'cpu': searches the cpu run's tiles and loop orders (matmul tile_m, tile_n, tile_k, order;
conv2d tile_h, tile_w, order) by measured time (info.counters.time_ms of each run: the median of
repeats runs after a warm-up, operands flushed from the caches); 'emu': the GPU kernel's tile (and
conv2d's tiled variant) by modelled cycles on the emulator (deterministic; small shapes). Tiles are
powers of two and the shape's own sizes (tiles= a list of your own); the search runs the default,
a seed grid (square tiles x every order), then one knob at a time around the best until nothing
improves (search='grid': every combination); on the cpu the default and the leader are timed twice
(the mean) until the leader is; budget_s stops it early. Every candidate's result must
equal the default run's (else list.rejected). Returns the winner's options (kernels.matmul(a, b,
winner) runs it) and the candidates best first ({options=, value=, time_ms= or modelled_cycles=,
label='CPU measured' or 'emulated, modelled cycles', default=}); list.from_cache, list.ran (kernel
runs made now), list.key, list.file, list.rejected, list.warnings. The best per key is kept in
$XDG_CACHE_HOME/lumen/tune/cache.json (else ~/.cache/...), keyed by op, backend, dtype, shape,
threads, SIMD path and CPU (emu: the latency model); a second call returns it without a run;
refresh=true searches again, cache=false skips the file, a corrupt file is ignored with a warning
and rewritten. verbose=true prints the search as a table, the winner marked *. docs/tune.md.]])
doc('lm.compile', "lm.compile(fn [, example_inputs] [, {order=, disable={fuse=true,...}, max_cache=8, quiet=}]) -> f",
  [[A compiled function (AICS ch. 4-5: static graphs). The first call (and a call whose tensors
differ in dtype, shape, strides or device, or whose Lua values differ: a re-trace, counted) runs fn
eagerly under a capture: every kernel it launches is recorded (forward, the backward rules autograd
runs inside fn, the optimizers' updates), the graph is optimized by the passes (lm.graph.passes) and
kept; later calls run that program: no Lua, no autograd bookkeeping, fused kernels. f.info: the last
call's kernels, bytes_read, bytes_written (counted from the program), compiled; f.stats: calls,
captures, retraces, why (what changed), breaks; f.graph: the last graph. A graph break (x:item(),
printing, an input changed in place, a result that requires grad...) prints where it happened and
f runs eagerly from then on (f.broken says why). docs/graph.md.]])
doc('lm.graph.capture', 'lm.graph.capture(fn, ...) -> g',
  [[Runs fn(...) once under a capture and returns its graph of kernels (g.nodes, g.values,
g.storages, g.live, g.results): g:optimize([opts]) runs the passes and returns their rewrites (also
in g.log), g:pass(name or function) one pass, g:snapshot(k) the graph after k rewrites, g:cost() and
g:run(...) (results..., info: kernels, bytes_read, bytes_written), g:print(), g:lines(), g:dot(),
g:kernel(k [, {backend = 'emu'|'cpu'|'cuda', block =, trace =}]) (line k of g:print, a fused group,
as one of the course's kernels: the emulator's trace for viz.show, or timed).
For passes of your own: g:resolve, g:is_constant, g:is_result, g:writers, g:foldable, g:fold,
g:merge, g:signature, g:remove; passes that add nodes: g:new_temp, g:view, g:insert, g:supports.
docs/graph.md.]])
doc('lm.graph.passes', 'lm.graph.passes.dce|fold|cse|simplify|affine|layout|forward|transpose|fuse|anchor(g [, opts]) -> rewrites',
  [[The graph-level passes, each a Lua function over a graph (lua/lumen/graph.lua): dead-code
elimination, constant folding (never a random draw or a result), common-subexpression elimination
(never random draws or in-place nodes, nor across a write to an input), algebraic simplification
(x*1, x+0, x/1, x-0, -(-x), x^1, a copy into the same layout; x-x on integers), affine (a bias and
BatchNorm in eval folded into the constant weights of a convolution or linear layer), layout (channels
last where the device prefers it: on the CPU an im2col convolution of a batch of small images with
constant weights becomes im2col_nhwc + one GEMM whose product is the NHWC result, saving the copy of
its columns; its readers keep NHWC, transposes where a value must change layout are inserted and
counted in g.layout, and a convolution converts only when it saves more bytes than they cost),
forward (a copy's
source written where the copy would put it: autograd's copies into .grad), transpose (a layout
copy read only by elementwise nodes goes: they read the strided source), elementwise fusion
(broadcast-aware; an expensive producer read through a broadcast is not recomputed), anchor (a
reduction with the elementwise kernels before and after it, a matmul or Winograd convolution (or a
channels-last convolution's product, by whole images) with the one after it: bias, activation,
residual add; one kernel each). The default order is
lm.graph.order; LUMEN_DISABLE_FUSION=1 (fuse and anchor) and LUMEN_DISABLE_PASSES=cse,fold switch
them off.]])
kdoc('spmv', 'y, info',
  [[A sparse matrix (from kernels.sparse) times a vector in one of four formats; info.counters
include padding (ELL's padded slots).]])
doc('kernels.sparse', 'kernels.sparse(dense) or kernels.sparse{rows=, cols=, vals=, shape={m, n} [, dtype=]} -> A',
  [[A sparse matrix for kernels.spmv, from a dense 2-D tensor or from 1-based (row, col, value)
triplets.]])
kdoc('divergence', 'out, info',
  [[Shows warp divergence: info.counters.simd_efficiency is the share of lanes kept busy over the
divergent region.]])
kdoc('streams', 'out, info',
  [[Copies and kernels split into segments on streams, so transfers overlap computation;
info.timeline shows what ran when, against the serial schedule.]])
kdoc('coalescing', 'out, info',
  [[Memory coalescing: sums of a matrix, one thread per sum: column sums ('coalesced': a warp's
lanes read consecutive addresses, one 128-byte line per load) or row sums ('strided': the lanes a
row apart, 32 lines per load). The same adds; info.counters.global_transactions (32-byte sectors)
and modelled_cycles differ.]])
kdoc('transpose', 'out, info',
  [[A matrix transpose in 32 x 32 tiles: 'naive' (strided writes), 'shared' (through a shared tile
read down a column: 32-way bank conflicts, info.counters.bank_conflicts) or 'padded' (a padding
column: no conflicts). out is x transposed.]])

-- Student kernels (src/lua/launch.c, docs/student-kernels.md) and the puzzles (lua/lumen/puzzles.lua).
local LOPTS = {}
for _, o in ipairs((lm._kernels and lm._kernels.launch_options) or {}) do
  LOPTS[#LOPTS + 1] = string.format('%s: %s (default: %s)', o.key, o.doc, o.default)
end
doc('kernels.launch', 'kernels.launch(fn, {grid=, block=, shared=, args=, const=, name=, racecheck=, trace_cap=, dtype=}) -> info',
  [[Runs the Lua function fn(t, ...) once per thread on the SIMT emulator, a coroutine per thread,
scheduled warp by warp and barrier phase by barrier phase as the shipped kernels are. t has
threadIdx, blockIdx, blockDim, gridDim (each .x .y .z), warp, lane, shared (t.shared.NAME[i]),
const (t.const.NAME[i]) and the methods t:sync() (__syncthreads), t:atomic_add(array, i, v)
(returns the old value), t:add(x, y [, pad]) (an addition the counters count, in the kernel's
dtype) and t:branch(cond) (a branch drawn as divergence). Tensor arguments are device arrays
indexed from 0, as in CUDA C, read and written in place (views through a copy written back).
Out-of-bounds accesses, barriers not every thread reaches, races within a barrier phase, errors
in a thread and Ctrl-C stop the launch with a message naming block, thread, array and index.
Returns info (source 'emu', the counters of every kernels call, info.trace: viz.show(info)).
Options: ]] .. table.concat(LOPTS, '; ') .. '.')
doc('kernels.opencl', "kernels.opencl(source, {global=, local=, args=, kernel=, repeats=}) -> info",
  [[Builds an OpenCL C kernel given as a string and runs it for real on the OpenCL device (PoCL:
the CPU). global: work-items per dim (a number or {x, y[, z]}: OpenCL counts work-items, not
groups); local: the work-group (must divide global; nil: the runtime's choice). args, one per
parameter: a tensor for a __global or __constant pointer (its dtype the pointee's: float ->
float32, int -> int32, ...; CPU tensors are copied in, and every tensor whose parameter is not
const gets the results back in place), a number for a value parameter (checked against its type),
{local_bytes = N} for a __local pointer. kernel: which one (nil: the source's only kernel). Each
of the repeats (default 1) starts from the arguments as given. A source that does not compile
raises with the build log, its line shown with a caret. info: time_ms (OpenCL events, the median),
compile_ms, cached, kernel, device, label, global, local. docs/opencl.md.]])
doc('kernels.bang', "kernels.bang.device{clusters=, cards=, chips=, nram=, wram=, sram=, gdram=, model=} -> dev",
  [[BANG C on a simulated MLU (AICS ch. 8). Host code as CNRT: dev:malloc(n [, dtype]) (GDRAM),
dev:memcpy(dst, src, 'HOST2DEV' | 'DEV2HOST' | 'DEV2DEV'), dev:queue(), dev:launch(fn, {dim = n |
{x, y, z}, type = 'BLOCK' | 'UNION1' | 'UNION2' | 'UNION4' | 'UNION8', queue =, args =, name =}),
q:sync() -> info (kernels' start/stop in modelled cycles, the timeline of every unit). A kernel is
fn(k, ...) run once per task: k.taskId, k.taskIdX/Y/Z, k.taskDim(X/Y/Z), k.clusterId, k.clusterDim,
k.coreId, k.coreDim; k:nram / k:wram (dtype, n [, name]), k:sram(dtype, n, name) (shared by the
cluster); k:__memcpy(dst, src, bytes, 'GDRAM2NRAM' ...), k:__memcpy_async + k:__sync_io();
__bang_add/sub/mul/maximum(dst, a, b, n), __bang_active_relu/sigmoid(dst, src, n),
__bang_reduce_sum, __bang_matmul(dst, lhs, rhs, m, k, n); k:__sync_cluster(), k:__sync_all().
Bounds, capacities, directions, SRAM races, missing __sync_io and deadlocked barriers are errors
naming task, cluster, core and line. docs/bang.md.]])
doc('kernels.racecheck', 'kernels.racecheck([on]) -> was_on',
  [[Whether emulated runs check for races, as compute-sanitizer's racecheck does: within each
barrier phase of a block, a write and another thread's read or write of the same element (global
or shared memory) with no barrier between them; across blocks, any two plain accesses of one global
element by different blocks, one a write (blocks are never ordered). The report says what fixes
it: an atomic for a read-modify-write, one writer, a guard on each coordinate, a barrier, another
launch. On by default, for the shipped kernels and kernels.launch alike. Without an argument it
only answers.]])
doc('kernels.last_run', 'kernels.last_run() -> info or nil',
  [[The info of the last kernels.launch that succeeded (what a lesson draws after :check, the
student's kernel as the check ran it).]])
doc('kernels.last_fault', 'kernels.last_fault() -> {kind=, array=, index=, hazard=, first=, second=, ...} or nil',
  [[What stopped the last emulated launch that failed (nil after one that succeeded): kind 'bounds'
(memcheck), 'uninit' (initcheck: a read of shared memory, or of an lm.empty element, that nothing
wrote), 'race', 'deadlock', 'barrier' (threads at two different barriers), 'error' or 'interrupted';
the array, its space and the 0-based index; for a race the hazard ('read-after-write',
'write-after-read', 'write-after-write', 'atomic'), across_blocks, rmw (a read-modify-write) and
writers; first and second: {thread = {x, y, z}, block = {x, y, z}, line, access}. A lesson's check
reads it rather than the message, which follows the language (lm.sys.lang).]])
doc('kernels.puzzles.list', 'kernels.puzzles.list() -> {{n=, name=, title=}, ...}',
  [[GPU-Puzzles on the emulator, in their order: map, zip, guards, map-2d, broadcast, blocks,
blocks-2d, shared, pooling, dot, conv1d, prefix-sum, axis-sum, matmul (lesson ece408/00-puzzles).]])
doc('kernels.puzzles.describe', 'kernels.puzzles.describe(n [, lang]) -> text',
  [[Puzzle n (or its name): the task, the standard input, the launch (grid, block, shared
arrays), the targets per thread and the kernel's signature to start from.]])
doc('kernels.puzzles.check', 'kernels.puzzles.check(n, fn [, {lang=, text=}]) -> ok, message, score',
  [[Runs the kernel fn on puzzle n's standard input and on fresh random ones, compares every output
with a CPU reference, then scores the standard run like GPU-Puzzles (the most global and shared
reads and writes of one thread, from the trace) against the puzzle's targets, and its modelled
cycles against 1.5 x the reference solution's. The message says what is wrong, where to look.]])
doc('kernels.puzzles.run', 'kernels.puzzles.run(n, fn) -> info, out, expected, inputs',
  [[Runs fn on puzzle n's standard input (fresh values): viz.show(info) draws every thread's reads
and writes.]])
doc('kernels.puzzles.show', 'kernels.puzzles.show(n, fn [, lang]) -> info, report',
  [[As run, with a report to print: the inputs, out beside the expected values, and the score.]])
doc('kernels.puzzles.solution', 'kernels.puzzles.solution(n [, name]) -> code',
  [[The reference solution of puzzle n as Lua code (with name: "name = function ...").]])
doc('kernels.puzzles.wrong', 'kernels.puzzles.wrong(n [, name]) -> code',
  [[A plausible mistake for puzzle n, which kernels.puzzles.check refuses (the lesson's tests).]])
doc('kernels.puzzles.reference', 'kernels.puzzles.reference(n) -> fn', [[The reference kernel of puzzle n.]])

--- The counters a run of kernels.<name> gives, per backend that runs here: {{backend, names}, ...}
--- (from running kernels.samples[name]; measured once per session).
local counter_cache = {}
function H.kernel_counters(name)
  if counter_cache[name] then return counter_cache[name] end
  local ok, K = pcall(require, 'kernels')
  local sample = ok and K.samples and K.samples[name]
  local out = {}
  for _, o in ipairs(KSPEC[name] or {}) do
    if o.key == 'backend' then
      for _, b in ipairs(o.values or {}) do
        if b ~= 'auto' and (b ~= 'cuda' or lm.cuda.is_available()) and sample then
          local args = table.pack(sample())
          args[args.n].backend = b
          local okr, _, info = pcall(K[name], table.unpack(args, 1, args.n))
          local names = okr and type(info) == 'table' and rawget(info, 'counter_names')
          out[#out + 1] = { b, names and table.concat(names, ', ') or ('(not run: ' .. tostring(_) .. ')') }
        elseif b == 'cuda' then
          out[#out + 1] = { b, '(no GPU here: ' .. tostring(lm.cuda.unavailable_reason()) .. ')' }
        end
      end
    end
  end
  counter_cache[name] = out
  return out
end

-- ---------------------------------------------------------------- viz

doc('viz.open', 'viz.open([{width=, height=}]) -> true',
  [[Opens the window (1280 x 720 points by default; resizable, HiDPI aware). Without a display,
or with lumen --headless, it renders offscreen and says so once: viz.snapshot writes what the window
would show. viz.show and viz.scene open it themselves.]])
doc('viz.close', 'viz.close()', [[Closes the window and drops its scene (Esc in the window does the same;
the REPL goes on).]])
doc('viz.show', "viz.show(info_or_trace_or_tensor_or_module [, {scene=, step=, variant=, ...}]) or viz.show('quant', W [, opts])",
  [[Draws a kernel result in the scene of its pattern (scan, reduce, histogram, divergence, conv,
matmul, spmv, timeline): the info of a kernels call, its trace, or an array of results of one
pattern. Emulated runs give the picture from their trace; the lecture's other algorithms run on the
same input; runs without a trace (cpu, cuda) add their measured counters to the panel. Every number
names its source. A tensor with a grad_fn: its autograd graph, stepped backward node by node
({gradcheck = f, inputs = {x, ...}}: each rule against float64 finite differences, f rebuilding the
graph from float64 inputs); a tensor without one: its storage, shape, strides and offset ({scene =
'tensor'} for one with a grad_fn); an nn module: its layers (viz.watch adds live histograms);
viz.show(module, {input=x, classes={...}}): every layer's feature maps for x (the features scene,
CNN Explainer's view: a Conv2d cell's arithmetic, the softmax of the output).
viz.show(g) or viz.show('graph', g [, opts]), g an lm.graph Graph after g:optimize(): the graph
scene's compiled view, step 0 the graph as captured and step k g:snapshot(k), one rewrite of the
passes per step (removed nodes faded where they were, a merge linked to the node kept, a fold turned
into a constant, a fused kernel drawn around its ops), with the kernels and bytes of the step and of
step 0 counted from the program by lm.graph; viz.scene('graph', {expr = 'compiled'}) demonstrates it.
viz.show('quant', W [, {bits=4, granularity='tensor'|'channel'|'group', group_size=32,
symmetric=true, activations=X, alpha=0.5}]): a weight matrix (rows: output channels) on its
quantization grid, the rounding error per element, and SmoothQuant moving X's outlier channels
into W. viz.show('attention', {weights=W, tokens={...}, causal=, source=} [, {query=}]): W
(layers, heads, T, T) as heat maps per head, the causal mask, where a query looks.
viz.show('rnn', {rnn=, lstm=, rnn_clipped=, lstm_clipped=, clip=}): ||dL/dh_t|| per step on a
log scale (viz.rnn_gradients{hidden=, length=, gain=, clip=, seed=} measures them).
viz.show('detection', {images=X, truth={{boxes=, classes=}, ...}, pred={{boxes=, scores=, classes=,
keep=}, ...}, classes={...}, iou=0.5}): boxes before and after NMS, true and false positives.
kernels.bang (BANG on a simulated MLU; every number its modelled cycles): viz.show('queues', info)
(info = q:sync() or dev:info(); viz.show(info) too) draws the timeline, a row per cluster, each unit
(BLOCK or UNIONx) a bar on its clusters, each queue's kernels issued, waiting and running;
viz.show('mlu', info) the cards, chips, clusters and cores as nested boxes at each moment (task, NRAM,
WRAM, SRAM in use); viz.show('pingpong', {single = info1, double = info2} [, {core = 0}]), each from a
device with dev:record(true) before its launch: one core's DMA and compute lanes single- against
double-buffered, the overlap and the cycles saved. Without data each draws a demonstration.
lumen.dlp (a systolic array with double-buffered scratchpads, counted as SCALE-Sim counts; every
number says so): viz.show('systolic', a, layer [, {fold = f}]) (a = dlp.array{...} of at most 32 x 32
PEs, layer = dlp.conv{...} or dlp.gemm{...}; viz.show(a, layer) too) steps through the array one
compute cycle at a time: which PEs multiply-accumulate, what each keeps (OS the output's partial
sum, WS the weight, IS the input), the operands entering its edges skewed, the wavefront, the fold,
the MACs per cycle and the utilization so far; viz.show('dma', r | {a = r1, b = r2}) draws reports
of a:run(layer, {events = N}): the ifmap and filter prefetches, the ofmap drains, the folds and the
stalls with the operand that caused each, on one time axis (enough bandwidth against too little);
viz.show('energy', r | {r1, r2, ...} [, {table = t}]) the picojoules of r:energy(t) per level (MAC,
registers, PE hops, SRAM, DRAM) and whether data movement dominates, decided from the numbers.
viz.scene('systolic' | 'dma' | 'energy') draws a demonstration.]])
doc('viz.rnn_gradients', "viz.rnn_gradients([{hidden=16, length=50, inputs=4, gain=1, clip=1, seed=0, nonlinearity='tanh'}]) -> data",
  [[Measures ||dL/dh_t|| for t = 1..length for an nn.RNNCell and an nn.LSTMCell of the same size
(float64, seeded, the RNN's weight_hh times gain) on the same inputs, L = sum(h_T), with autograd
one step at a time, without and with the gradient reaching each h_t clipped to norm clip. Returns
{rnn=, lstm=, rnn_clipped=, lstm_clipped=, clip=, source=} for viz.show('rnn', data).]])
doc('viz.scene', 'viz.scene(name [, opts])',
  [[Shows a scene built from options alone (it runs its own demonstration input), e.g.
viz.scene('scan', {n=16, input='pmpp'}). viz.scenes() lists the scenes and their options.]])
doc('viz.plot', "viz.plot(series_name, step, value [, {x=}]) or viz.plot(series_name, xs, ys [, {x=}])",
  [[Adds a point to a live curve: 'train/loss' (or 'loss/train') goes to the chart loss as the series
train. value: a number or a one-element tensor; NaN and Inf are drawn as gaps and counted. xs and ys
(tables of numbers or tensors of as many values) add a whole curve y(x) at once. The x axis says
what x is: the option x (viz.plot('loss', lr, l, {x='lr'})), else 'step' while every x is a whole
number that grows, else 'x'; only steps (or epochs) get a steps/s rate and a smoothed line. Shows
the curves scene when no other scene is shown; it redraws at most 10 times a second while Lua
computes.]])
doc('viz.follow', 'viz.follow(csv_path) / viz.follow() -> status', [[Live curves from a CSV log as it grows
(the examples' --log: step, epoch, loss, accuracy, lr, seconds, split). x is the step column, else
the epoch column, else the first column, and the axis is named by its header. A missing file is waited
for, a truncated one starts again, malformed lines are skipped and counted. viz.follow() returns
what the reading says.]])
doc('viz.clear', 'viz.clear()', [[Forgets every series of the curves (viz.plot's and the followed file's).]])
doc('viz.due', 'viz.due() -> boolean', [[Whether a live scene would draw new data now (true at most about
10 times a second): for hooks that would otherwise compute for nothing.]])
doc('viz.watch', 'viz.watch(model [, {show=}]) -> watcher', [[Shows the model (unless show = false) and
records, at most about 10 times a second, each layer's activations (forward hooks) and, when
watcher:gradients() is called after backward, its parameter gradients, as live histograms in the
model scene. watcher:close() removes the hooks.]])
doc('viz.snapshot', 'viz.snapshot(path) -> path', [[Writes the current frame as a PNG (the step shown,
without its animation); a folder that does not exist or cannot be written is an error naming it.]])
doc('viz.is_open', 'viz.is_open() -> boolean', [[Whether the window is open.]])
doc('viz.step', 'viz.step([n]) -> step, steps', [[Goes n steps forward (back when negative; 1 by
default). Steps count from 0, the picture before the first step. With the window closed it does
nothing and returns nil, so a script that animates keeps running.]])
doc('viz.seek', 'viz.seek(step) -> step, steps', [[Goes to a step (0 .. steps - 1).]])
doc('viz.play', 'viz.play()', [[Plays the steps (from the start when at the end); space in the window.]])
doc('viz.pause', 'viz.pause()', [[Pauses the animation.]])
doc('viz.variant', 'viz.variant([name]) -> name', [[The next variant of the scene (as Tab does), or the
one named: side by side or one algorithm, a block, a pattern.]])
doc('viz.pick', 'viz.pick(x, y) -> table or nil', [[What the hover shows at a pixel of the frame
(drawable pixels from the top left): kind, state, index, step, thread, block, warp, lane, value,
event (trace[event]), colour and the hover text.]])
doc('viz.layout', 'viz.layout() -> {cells}', [[The cells of the current frame as rectangles
{x=, y=, w=, h=} with what each holds (kind, group, state, index, step, value, colour, ...).]])
doc('viz.state', 'viz.state() -> table', [[The scene shown, its step and steps, variant, play state,
speed, the frame's size and UI scale, the title, what the step shows, the area and panel rectangles.]])
doc('viz.scenes', 'viz.scenes() -> {{name=, summary=, options=}}', [[The built scenes and their options.]])
doc('viz.colors', 'viz.colors() -> {name = {r, g, b}}', [[The colours every scene uses for one meaning
(active, idle, path_a, ...): Okabe-Ito for categories, viridis for heat maps.]])
doc('viz.pixel', 'viz.pixel(x, y) -> r, g, b, a', [[A pixel of the current frame (tests, lessons).]])
doc('viz.key', 'viz.key(name)', [[Presses a key as a user would: 'space', 'right', 'left', 'home',
'end', '+', '-', 'tab', 's', '?', 'escape', '0'.]])
doc('viz.pointer', 'viz.pointer(x, y)', [[Moves the pointer there, as hovering does.]])
doc('viz.zoom', 'viz.zoom(factor [, x, y])', [[Zooms the picture about a pixel (the centre of the
scene by default), as the wheel does; viz.zoom(0) fits it again (the 0 key). Values appear in cells
once they are wide enough.]])
doc('viz.pan', 'viz.pan(dx, dy)', [[Moves the picture by that many pixels, as dragging does.]])
doc('viz.redraw', 'viz.redraw() -> ms', [[Draws a whole frame now and waits for it (benchmarks).]])
doc('viz.pump', 'viz.pump()', [[Handles the window's events now (the REPL and the Lua hook do it).]])

-- ---------------------------------------------------------------- lesson

doc('lesson.list', 'lesson.list() -> {names}', [[The lessons' names, such as 'ece408/16-scan', by course
then number: those of Lumen's lessons/ directory, then those of LUMEN_LESSON_PATH.]])
doc('lesson.open', 'lesson.open(name [, {env=, step=, record=}]) -> lesson', [[Opens a lesson (a name,
'16-scan', a slug or the number :lessons shows; an unknown name is an error naming the nearest
ones) at step 1 or opts.step and returns its table (steps is an array). Its code runs in env (the
globals by default); record=false keeps the progress file untouched.]])
doc('lesson.step', 'lesson.step([n]) -> integer', [[The current step's index; with n, goes to step n first
(an error outside 1..#steps).]])
doc('lesson.next', 'lesson.next() -> boolean', [[Goes to the next step (false at the end).]])
doc('lesson.prev', 'lesson.prev() -> boolean', [[Goes to the previous step (false at the start).]])
doc('lesson.run', 'lesson.run([code [, {echo=}]]) -> ok, output', [[Without code: runs the current
step's code in the lesson's environment (the steps before it first, quietly, when they have not
run). With code: runs that (an answer, or an exercise's solution). Returns true and what it
printed, or false and the output followed by the error.]])
doc('lesson.check', 'lesson.check([answer]) -> ok, message', [[Checks the current step's exercise: its
check looks at what you defined (answer is passed to it: :check 17 gives 17). A solved exercise
is recorded in the progress file. The message is in the current language.]])
doc('lesson.current', 'lesson.current() -> lesson, name', [[The open lesson's table and its name, or nil.]])
doc('lesson.command', 'lesson.command(name, arg)', [[Runs a REPL command of the runner (:next is
lesson.command('next', '')) and prints what it does.]])
doc('lesson.dirs', 'lesson.dirs() -> {dirs}', [[Where lessons are looked for: Lumen's lessons/, then
LUMEN_LESSON_PATH (colon-separated).]])
doc('lesson.catalog', 'lesson.catalog() -> {{name=, path=, course=, nn=, slug=}}', [[The lessons found,
with their files.]])
doc('lesson.find', 'lesson.find(name) -> entry or nil, message', [[The catalog entry a name means
(the full name, NN-slug, the slug, a number of :lessons, a file path), or nil and a message with
the nearest names.]])
doc('lesson.load', 'lesson.load(path) -> lesson or nil, problems', [[Reads and validates a lesson file.]])
doc('lesson.validate', 'lesson.validate(path) -> ok, problems, warnings', [[Checks a lesson file's
fields against docs/lessons.md; each problem names the file, the step and the field.]])
doc('lesson.verify', 'lesson.verify(path [, {width=}]) -> ok, problems, warnings', [[What lumen
--check-lesson runs: the fields, then every step in a fresh environment (its code and expect, its
scene rendered offscreen, its exercise refusing the untouched state and each wrong answer and
accepting its solution) and its texts laid out in every language.]])
doc('lesson.progress_path', 'lesson.progress_path() -> path', [[The progress file:
$XDG_STATE_HOME/lumen/lessons, default ~/.local/state/lumen/lessons.]])
-- ---------------------------------------------------------------- dist (require 'lumen.dist')

doc('dist.init', 'dist.init() -> rank, world_size', [[Joins the MPI world when the script runs under
mpirun (mpirun -np N lumen script.lua; as root --allow-run-as-root, past the cores --oversubscribe);
without mpirun a world of one rank where every collective is the identity. After an error a rank
stops the others at the program's end (MPI_Abort) instead of leaving them waiting.]])
doc('dist.rank', 'dist.rank() -> integer', [[This rank, 0 .. world_size - 1.]])
doc('dist.world_size', 'dist.world_size() -> integer', [[The number of ranks.]])
doc('dist.barrier', 'dist.barrier()', [[Waits until every rank reaches it.]])
doc('dist.all_reduce', "dist.all_reduce(t [, {op='sum'|'mean'|'max'|'min', algo='mpi'|'ring'|'tree'}]) -> t",
  [[t (in place) becomes the reduction over the ranks. 'mpi' is MPI_Allreduce; 'ring' (reduce-scatter
then all-gather around the ring, in C on MPI's point-to-point calls) and 'tree' (a binomial tree to
rank 0 and back, in Lua on send/recv) are Lumen's own: integer data give MPI's bits, floats differ by rounding only, every rank the same
bits. The ranks must agree on op, algo, shape and dtype: a disagreement is an error on every rank.]])
doc('dist.broadcast', 'dist.broadcast(t, src) -> t', [[Every rank's t (in place) takes rank src's values.]])
doc('dist.all_gather', 'dist.all_gather(t) -> Tensor', [[(world_size, ...): every rank's t in rank order.]])
doc('dist.reduce_scatter', "dist.reduce_scatter(t [, {op='sum'}]) -> Tensor", [[t's first dim split into
world_size parts; rank r gets part r reduced over the ranks (the first dim must divide).]])
doc('dist.send', 'dist.send(t, dst)', [[Sends t to rank dst, which calls dist.recv with a tensor of t's size.]])
doc('dist.recv', 'dist.recv(t, src) -> t', [[Fills t with what rank src sends (an error when the sizes differ).]])
doc('dist.sendrecv', 'dist.sendrecv(t, dst, into, src) -> into', [[Sends t to dst while receiving into from
src: a ring's step, where every rank sends and receives at once.]])
doc('dist.save', 'dist.save(path, tensors [, opts]) -> true', [[A checkpoint written once, by rank 0 (lm.save:
a temporary file renamed over path), while the others wait; afterwards every rank can lm.load it. A
failure on rank 0 is an error on every rank, with rank 0's reason.]])
doc('dist.isend', 'dist.isend(t, dst [, tag]) -> handle', [[Starts sending t to rank dst and returns at once;
handle:wait() ends it (t must not change until then). What a pipeline's stages send with.]])
doc('dist.copy_to_parallel', 'dist.copy_to_parallel(x) -> Tensor', [[Megatron's f: the identity forward;
backward all-reduces the gradient over the ranks (an lm.autograd.Function).]])
doc('dist.reduce_from_parallel', 'dist.reduce_from_parallel(x) -> Tensor', [[Megatron's g: forward
all-reduces x over the ranks; backward passes the gradient through.]])
doc('dist.gather_from_parallel', 'dist.gather_from_parallel(x) -> Tensor', [[Forward: every rank's x
concatenated on the last dim in rank order; backward: this rank's part of the gradient.]])
doc('dist.scatter_to_parallel', 'dist.scatter_to_parallel(x) -> Tensor', [[Forward: this rank's part of
x's last dim (which the world size must divide); backward: the parts' gradients gathered.]])
doc('dist.ColumnParallelLinear', "dist.ColumnParallelLinear(in, out [, {bias=true, gather_output=true, dtype=, from=}])",
  [[A Linear split by output rows over the ranks (Megatron): rank r keeps out/N rows of W and b.
Forward: f(x), then x W_r^T + b_r, gathered on the last dim unless gather_output = false (then a
RowParallelLinear with input_is_parallel = true takes it). from = an nn.Linear to split; else one
made as nn.Linear makes it, on rank 0, for every rank.]])
doc('dist.RowParallelLinear', "dist.RowParallelLinear(in, out [, {bias=true, input_is_parallel=false, dtype=, from=}])",
  [[A Linear split by input columns: rank r keeps in/N columns of W (and the whole bias). Forward:
this rank's part of x (or x as given, input_is_parallel), x_r W_r^T, summed over the ranks (g),
plus b. After a ColumnParallelLinear(gather_output = false): one all-reduce for the pair.]])
doc('dist.Pipeline', "dist.Pipeline(stages, {micro_batches=M, schedule='gpipe'|'1f1b'|fn, checkpoint=false})",
  [[Pipeline parallelism: stage k (a list of modules, one per rank, or a function k -> module) runs
on rank k - 1. pipe:train_step(x, target, loss_fn) -> loss runs M micro-batches through the
schedule (activations forward, gradients back between ranks) and leaves the gradients of the mean
loss in this stage's parameters; pipe:forward(x) -> the output on the last rank. schedule may be a
function (K, k, M) -> stage k's ops ({'F', m}, {'B', m}), checked before it runs; checkpoint
recomputes each stage's forward in its backward. pipe.timeline and pipe.stats (bubble measured,
counted in slots and by (K-1)/(M+K-1); peak activations); viz.show('pipeline', pipe) draws it.]])
doc('dist.ZeroRedundancyOptimizer', 'dist.ZeroRedundancyOptimizer(params, optim.Adam, opts) -> zero',
  [[ZeRO stage 1: the parameters split over the ranks (whole tensors, each to the least loaded
rank); each rank keeps the optimiser state of its part only, zero:step() updates it and broadcasts
it from its owner. Gradients must be the same on every rank (after DDP). zero:zero_grad(),
zero:state_bytes(), zero.owner[i].]])
doc('dist.is_available', 'dist.is_available() -> boolean', [[Whether this build has the MPI module.]])
doc('dist.is_initialized', 'dist.is_initialized() -> boolean', [[Whether dist.init() ran.]])
doc('dist.wtime', 'dist.wtime() -> seconds', [[MPI_Wtime (lm.sys.clock without MPI). Open MPI counts it
from each process's start: compare ranks' times from a barrier they left together.]])
doc('dist.mpi_version', 'dist.mpi_version() -> string', [[The MPI library ("Open MPI v4.1.4"), or nil.]])

-- ---------------------------------------------------------------- generative (require 'lumen.generative')

doc('gen.toy2d', "gen.toy2d(name, n [, {seed=}]) -> Tensor", [[n points (n, 2) of a 2-D toy distribution: 'ring' (8
Gaussians, radius 2), 'moons', 'line', 'grid' (5 x 5 Gaussians), as GAN Lab and tiny-diffusion use.]])
doc('gen.js_divergence', "gen.js_divergence(a, b [, {bins=40, range={lo, hi}}]) -> bits, p, q", [[The Jensen-Shannon
divergence of two point clouds (n, 2) on a bins x bins grid (log base 2: 0 = the same histogram, 1 =
disjoint), and the two histograms: the yardstick of the GAN and diffusion examples.]])
doc('gen.schedule', "gen.schedule('linear'|'cosine', T [, {beta_start=1e-4, beta_end=0.02, s=0.008}]) -> sched",
  [[A DDPM noise schedule: {betas, alphas, alpha_bars} (float64, T steps), linear (Ho et al.) or cosine (Nichol
& Dhariwal).]])
doc('gen.q_sample', 'gen.q_sample(x0, t, noise, sched) -> x_t', [[The forward process in closed form:
sqrt(abar_t) x0 + sqrt(1 - abar_t) noise; t a step 1..T or an int64 tensor of one step per row.]])
doc('gen.ddpm_sample', 'gen.ddpm_sample(eps_model, shape, sched [, {seed=, trace=}]) -> x_0', [[Ancestral sampling:
from N(0, I) through T reverse steps with eps_model(x_t, t) predicting the noise; trace collects x_T .. x_0.]])
doc('gen.ddim_sample', 'gen.ddim_sample(eps_model, shape, sched, steps [, {eta=0, seed=, trace=}]) -> x_0', [[DDIM
sampling with `steps` evenly spaced steps (deterministic at eta = 0).]])
doc('gen.time_embedding', 'gen.time_embedding(t, dim [, {max_period=10000}]) -> Tensor', [[The sinusoidal embedding
of steps t: (#t, dim), [cos(t f_k), sin(t f_k)] with f_k = max_period^(-k/(dim/2)).]])
doc('gen.GAN2D', "gen.GAN2D{data='ring', hidden=64, layers=3, batch=256, lr_g=1e-3, lr_d=1e-3, loss='nonsaturating'|'minimax', d_steps=1, seed=1}",
  [[A GAN on 2-D points (MLPs G and D, Adam): gan:step() -> d_loss, g_loss; gan:sample(n); gan:surface(bins, lo,
hi) (D's probability on a grid); gan:warp(k, lo, hi) (G of a grid of z); gan:js(n); viz.show('gan2d', gan).]])
doc('gen.DDPM2D', "gen.DDPM2D{data='ring', T=200, schedule='linear'|'cosine', beta_end=0.04, hidden=128, layers=4, t_dim=32, batch=256, lr=1e-3, seed=1}",
  [[A DDPM on 2-D points (an MLP predicting the noise from [x_t, the time embedding]): m:step() -> loss;
m:sample(n [, {ddim = steps}]); m:js(n); viz.show('diffusion', m) draws its chains.]])

doc('gen.DCGAN', "gen.DCGAN{z_dim=64, width=64, batch=64, lr=2e-4, seed=1}", [[A conditional DCGAN for 28 x 28 grey
images in [-1, 1] (G upsamples with nn.ConvTranspose2d 7 -> 14 -> 28): dcgan:step(x, y) -> d_loss, g_loss;
dcgan:sample(y) -> images in [0, 1] of the classes y (1-based).]])
doc('gen.UNet', "gen.UNet{channels=1, width=32, classes=10, t_dim=64}", [[A small conditional U-Net for DDPMs on
28 x 28 images: unet(x, t, y) -> the predicted noise (residual blocks with GroupNorm and SiLU, time and class
embeddings, skips, nearest upsampling).]])
doc('gen.ImageDDPM', "gen.ImageDDPM{T=400, schedule='linear', width=32, lr=2e-4, batch=64, seed=1}", [[Trains a
gen.UNet as a DDPM: m:step(x, y) (x in [-1, 1]) -> loss; m:sample(y [, {ddim = steps}]) -> images in [0, 1].]])
doc('gen.fashion_classifier', "gen.fashion_classifier([{epochs=1, cache=path|false}]) -> model, test_accuracy",
  [[The yardstick's CNN, trained on Fashion-MNIST once and cached ($XDG_CACHE_HOME/lumen/fashion_cnn.safetensors).]])
doc('gen.classifier_yardstick', 'gen.classifier_yardstick(model, images, y) -> {accuracy, per_class, diversity, predicted}',
  [[The share of generated images the classifier reads as the class asked for (overall, per class), and per class the
mean pairwise distance of their features (diversity).]])
doc('gen.style_transfer', "gen.style_transfer(content, style [, {size=128, steps=20, optimizer='lbfgs'|'adam', content_weight=1, style_weight=10}]) -> image, history",
  [[Gatys' style transfer: the image optimised so its deep features match the content's and its features'
means and centred Gram matrices match the style's at five scales, on gen.StyleNet (random fixed convolutions:
no download).]])
doc('gen.gram', 'gen.gram(f [, centered]) -> (N, C, C)', [[f f^T / (C H W) for features f (N, C, H, W); centred:
each channel's mean over the positions subtracted first.]])
doc('gen.TransformNet', 'gen.TransformNet{width=16, blocks=3}', [[The real-time style network (Johnson et al.):
trained by gen.train_transform(net, contents, style, {steps=, size=, batch=}), it stylises in one forward pass.]])

doc('lesson.say', 'lesson.say(en, zh) -> text', [[A text in both languages, {en = en, zh = zh} (for
lesson files and the messages of checks).]])
doc('lesson.text', 'lesson.text(t) -> string', [[A text (a string or {en=, zh=}) in the current language.]])
doc('lesson.lang', 'lesson.lang([l]) -> "en" or "zh"', [[The language of the lessons: :lang, else
LUMEN_LANG, else LANG (zh_* gives Chinese), else English. With l ('en' or 'zh'), sets it first.]])
doc('lesson.scene', 'lesson.scene([i]) -> shown', [[Goes to step i (default: the current one) and shows its
scene as entering the step does; in a Jupyter notebook it appears as a picture under the cell.]])
doc('lesson.verdict', 'lesson.verdict([i]) -> ok', [[Goes to step i (default: the current one) and checks
its exercise as :check does, printing the verdict and, when it is not right yet, the next hint (the
check cells of a lesson notebook: lumen --lesson-notebook NAME OUT.ipynb).]])
doc('lesson.try', 'lesson.try(fn, ...) -> true, results... or false, text, kind', [[Calls a student's
function protected (for checks): an error becomes a message (a text) instead of stopping the check.
kind says what stopped it: 'race' or 'memcheck' (kernels.launch's checkers stopped the student's
kernel; the text carries their report), 'deadlock', 'kernel' (an error inside a kernel), 'error'.]])
doc('lesson.lcg', 'lesson.lcg(seed) -> next', [[A generator of values in [0, 1) from a linear congruential
sequence (s = (1103515245 s + 12345) mod 2^31): a check's cases without touching lm's or math's random state.]])
doc('lesson.rand', 'lesson.rand(seed, scale, d1, d2, ...) -> Tensor', [[A float64 tensor of the shape, uniform in
[-scale, scale], from lesson.lcg(seed) in C order.]])
doc('lesson.need', 'lesson.need(env, name [, kind]) -> ok, value or text', [[env[name] when it is a
kind ('function' by default, 'table', 'number', 'tensor', 'any'), else a message saying what to define.]])
doc('lesson.compare', 'lesson.compare(got, want [, {what=, tol=, zero_based=, why=}]) -> ok, text',
  [[Compares a result (a tensor or an array) with the expected one; the message names the first
element that differs, its value and the expected one, and what why(i, got, want) adds.]])
doc('lesson.number', 'lesson.number(v) -> number or nil', [[v as a number: a number, a one-element
tensor or a numeric string.]])
doc('lesson.show', 'lesson.show(v) -> string', [[A value as a check's message shows it: integers
without a fraction (100, not 100.0), other numbers to 6 significant digits, anything else by tostring.]])

-- ---------------------------------------------------------------- availability and lookup

local roots = {
  lm = function() return lm end,
  F = function() return lm.nn and lm.nn.functional end,
  dlp = function() return require 'lumen.dlp' end, -- a module of its own (require 'lumen.dlp')
}

local function field(t, k)
  if t == _G then t = { [k] = lm._global(k) } end -- a module global not read yet: loaded now
  if t == lm and rawget(lm, k) == nil then -- lm.vision, lm.quant: loaded on first read
    local ok, v = pcall(function() return lm[k] end)
    if ok and v ~= nil then return v end
  end
  local hops = 0
  while type(t) == 'table' and hops < 8 do
    local v = rawget(t, k)
    if v ~= nil then return v end
    local mt = getmetatable(t)
    t = type(mt) == 'table' and rawget(mt, '__index') or nil
    hops = hops + 1
  end
  return nil
end

--- Whether name exists in this program; when not, the missing module's name (or nil).
function H.available(name)
  local head, rest = name:match('^([%a_]+)(.*)$')
  if head == 'Tensor' then
    local sep, m = rest:match('^([.:])([%w_]+)$')
    return sep ~= ':' or field(lm.Tensor, m) ~= nil
  end
  local root = roots[head] and roots[head]() or lm._global(head) or package.loaded['lumen.' .. head]
  if root == nil then return false, head end
  local v = root
  for seg in rest:gmatch('[.:]([%w_]+)') do
    if type(v) ~= 'table' then return false end
    v = field(v, seg)
    if v == nil then
      -- a class method: the class is a table whose instances share methods; accept the class
      return false
    end
  end
  return true
end

local function resolve_global(path)
  local v = _G
  for seg in path:gmatch('[^.]+') do
    if type(v) ~= 'table' then return nil end
    v = field(v, seg)
    if v == nil then return nil end
  end
  return v
end

--- The entry name for what the user typed, or nil; a second result explains an alias.
function H.lookup(name)
  name = name:gsub('^%s+', ''):gsub('%s+$', ''):gsub('%(.*$', '')
  if E[name] or H.topics[name] then return name end
  local n = name:gsub('^lumen%.', 'lm.'):gsub('^lm%.nn%.functional%.', 'F.'):gsub('^lm%.Tensor[.:]', 'Tensor:')
  if E[n] or H.topics[n] then return n end
  -- x:method or x.field for a tensor x (or any name before ':')
  local obj, sep, m = n:match('^(.-)([.:])([%w_]+)$')
  if obj and obj ~= 'lm' and obj ~= 'Tensor' then
    local v = resolve_global(obj)
    if lm.is_tensor(v) or (sep == ':' and v == nil) then
      local key, note = H.lookup('Tensor' .. sep .. m)
      if key then return key, note end
    end
  end
  -- lm.sin is x:sin, x:maximum is lm.maximum
  if obj == 'lm' and E['Tensor:' .. m] then return 'Tensor:' .. m end
  if obj == 'Tensor' and E['lm.' .. m] then return 'lm.' .. m end
  -- in-place forms: x:exp_ is x:exp
  if m and m:sub(-1) == '_' then
    local base = H.lookup(n:sub(1, -2))
    if base then return base, 'x:' .. m .. '(...) is the in-place form: it changes x and returns it.' end
  end
  -- a bare name: every entry whose last part is it
  if not n:find('[.:]') then
    local hits = {}
    for k in pairs(E) do
      if k:match('[.:]' .. n:gsub('%p', '%%%0') .. '$') then hits[#hits + 1] = k end
    end
    table.sort(hits)
    if #hits == 1 then return hits[1] end
    if #hits > 1 then return nil, hits end
  end
  return nil
end

local function wrap(text, indent, width)
  text = text:gsub('%s+', ' ')
  local lines, line = {}, indent
  for w in text:gmatch('%S+') do
    if #line > #indent and #line + 1 + #w > width then
      lines[#lines + 1] = line
      line = indent .. w
    else
      line = (#line > #indent) and (line .. ' ' .. w) or (line .. w)
    end
  end
  lines[#lines + 1] = line
  return table.concat(lines, '\n')
end

local function not_available(name)
  local ok, module = H.available(name)
  if ok then return nil end
  if module then
    return "Not available yet: the '" .. module .. "' module is not built in this version of " ..
        'Lumen (it comes with a later issue). What API.md promises:'
  end
  return 'Not available yet in this version of Lumen. What API.md promises:'
end

-- ---------------------------------------------------------------- near misses

-- The edit distance of a and b, ignoring case, with a swap of neighbours counting one (optimal
-- string alignment): 'zeroes' is 1 from 'zeros', 'histgram' 1 from 'histogram', 'linear' 0 from
-- 'Linear'.
local function distance(a, b)
  a, b = a:lower(), b:lower()
  local prev2, prev, cur = {}, {}, {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    cur = { [0] = i }
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      local d = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      if i > 1 and j > 1 and a:byte(i) == b:byte(j - 1) and a:byte(i - 1) == b:byte(j) then
        d = math.min(d, prev2[j - 2] + 1)
      end
      cur[j] = d
    end
    prev2, prev = prev, cur
  end
  return prev[#b]
end

-- The string keys of t and of the tables its __index chain reaches (a class's methods), read
-- with next and rawget only: no user code runs.
local function live_keys(t)
  local keys, seen, hops = {}, {}, 0
  while type(t) == 'table' and hops < 8 do
    for k in next, t do
      if type(k) == 'string' and not seen[k] then seen[k] = true; keys[#keys + 1] = k end
    end
    local mt = getmetatable(t)
    t = type(mt) == 'table' and rawget(mt, '__index') or nil
    hops = hops + 1
  end
  return keys
end

--- The names nearest to a name that has no help (a typo: 'lm.zeroes' -> {'lm.zeros'}): entries,
--- topics and what the table before the last dot holds (a user's table too), or for a bare name
--- the globals and the entries' last parts. A longer name may be further off; at most 5, sorted.
function H.suggest(name)
  local n = name:gsub('^%s+', ''):gsub('%s+$', ''):gsub('%(.*$', '')
  n = n:gsub('^lumen%.', 'lm.'):gsub('^lm%.nn%.functional%.', 'F.'):gsub('^lm%.Tensor[.:]', 'Tensor:')
  local prefix, sep, last = n:match('^(.-)([.:])([^.:]*)$')
  local cands = {}
  for k in pairs(E) do cands[#cands + 1] = k end
  for k in pairs(H.topics) do cands[#cands + 1] = k end
  if prefix then
    local v = prefix ~= 'Tensor' and resolve_global(prefix)
    if lm.is_tensor(v) or (sep == ':' and v == nil) then -- x:matmull is Tensor:matmull
      n, prefix = 'Tensor' .. sep .. last, 'Tensor'
    elseif type(v) == 'table' then
      for _, k in ipairs(live_keys(v)) do cands[#cands + 1] = prefix .. '.' .. k end
    end
  else
    last = n
    for k in next, _G do if type(k) == 'string' then cands[#cands + 1] = k end end
    for k in pairs(lm._lazy) do cands[#cands + 1] = k end
  end
  if #last < 2 then return {} end
  local limit = #last <= 4 and 1 or #last <= 8 and 2 or 3
  local best, hits, seen = limit + 1, {}, {}
  -- names whose lengths differ by more than the limit are further off than it: not measured (a
  -- 10,000-character typo took a minute against every name)
  local function near(a, b) return math.abs(#a - #b) <= limit and distance(a, b) or math.huge end
  for _, c in ipairs(cands) do
    local d = near(n, c)
    if not prefix then d = math.min(d, near(n, c:match('[^.:]*$'))) end
    if c ~= n and not seen[c] and d <= limit and d <= best then
      if d < best then best, hits = d, {} end
      hits[#hits + 1] = c
      seen[c] = true
    end
  end
  table.sort(hits)
  while #hits > 5 do table.remove(hits) end
  return hits
end

local function alternatives(list)
  if #list == 1 then return list[1] end
  return table.concat(list, ', ', 1, #list - 1) .. ' or ' .. list[#list]
end

-- ---------------------------------------------------------------- what a table holds

local MAX_MEMBERS = 60

-- The live table a topic names ('kernels', 'lm.sys', 'Tensor').
local function topic_table(name)
  if name == 'Tensor' then return lm.Tensor end
  return resolve_global(name)
end

-- One line for t[k] that has no entry: a function with its parameters (a Lua function's names are
-- read by debug.getlocal without calling it), a table with its size, a tensor with its shape, a
-- value as it reads. Never calls a metamethod.
local function member_line(name, k, v)
  local full = name .. '.' .. k
  if type(v) == 'function' then
    local info, params = debug.getinfo(v, 'uS'), {}
    if info.what == 'C' then return full .. '(...)' end
    for i = 1, info.nparams do params[i] = debug.getlocal(v, i) end
    if info.isvararg then params[#params + 1] = '...' end
    if params[1] == 'self' then
      table.remove(params, 1)
      full = name .. ':' .. k
    end
    return full .. '(' .. table.concat(params, ', ') .. ')'
  end
  if lm.is_tensor(v) then
    if v:is_closed() then return full .. '  (a closed tensor)' end
    return full .. '  (a ' .. v:dtype() .. ' tensor of shape [' .. table.concat(v:shape(), ', ') .. '])'
  end
  if type(v) == 'table' then
    local count = H.count_fields(v)
    for t, _ in pairs(H.topics) do
      if t ~= name and rawequal(topic_table(t), v) then return full .. '  (:help ' .. t .. ')' end
    end
    return string.format('%s  (a table of %d field%s: :help %s)', full, count, count == 1 and '' or 's', full)
  end
  if type(v) == 'string' then
    return full .. ' = ' .. string.format('%q', #v > 40 and v:sub(1, 40) .. '...' or v):gsub('\\\n', '\\n')
  end
  if type(v) == 'number' or type(v) == 'boolean' then return full .. ' = ' .. tostring(v) end
  return full .. '  (a ' .. type(v) .. ')'
end

-- The string keys of t (its __index tables too), sorted, without those starting with _ (the
-- library's internals); for a topic (listed is true) only the tables and functions that neither
-- its entries nor its sub-topics already show.
local function members(name, t, listed)
  local out = {}
  for _, k in ipairs(live_keys(t)) do
    local full = name .. '.' .. k
    local v = field(t, k)
    if k:sub(1, 1) ~= '_' and (not listed or not E[full] and not E[name .. ':' .. k] and not H.topics[full]
        and (type(v) == 'table' or (type(v) == 'function' and not H.lookup(full)))) then
      out[#out + 1] = k
    end
  end
  table.sort(out)
  return out
end

--- The fields :help shows of a table: its array items and its string keys (its class's too)
--- without those starting with _.
function H.count_fields(t) return #t + #members('', t, false) end

-- :help on a table without an entry (a user's table, math, kernels.puzzles): what it holds.
local function show_table(name, t, paint)
  local n, keys = #t, members(name, t, false)
  local items = H.count_fields(t)
  print(paint('1', name) .. string.format(' (a table of %d field%s)', items, items == 1 and '' or 's'))
  local nn_mod = package.loaded['lumen.nn']
  if type(nn_mod) == 'table' and nn_mod.is_module and nn_mod.is_module(t) then
    print(wrap('An nn module: print(' .. name .. ') shows its layers and shapes, ' .. name ..
      ':parameters() its parameters; :help nn.Module lists the methods.', '  ', 96))
  end
  if n > 0 then
    local shown = {}
    for i = 1, math.min(n, 5) do
      local v = rawget(t, i)
      shown[i] = (type(v) == 'number' or type(v) == 'boolean') and tostring(v)
          or type(v) == 'string' and string.format('%q', #v > 20 and v:sub(1, 20) .. '...' or v)
          or lm.is_tensor(v) and 'a tensor' or 'a ' .. type(v)
    end
    print(string.format('  %s[1..%d]  %s%s', name, n, table.concat(shown, ', '), n > 5 and ', ...' or ''))
  end
  for i, k in ipairs(keys) do
    if i > MAX_MEMBERS then
      print(string.format('  ... and %d more', #keys - MAX_MEMBERS))
      break
    end
    local v = field(t, k)
    local e = E[name .. '.' .. k] or E[name .. ':' .. k]
    print('  ' .. (e and e.sig or member_line(name, k, v)))
  end
  if n == 0 and #keys == 0 then print('  (nothing in it)') end
end

local function show_entry(name, note, paint)
  local e = E[name]
  print(paint('1;32', e.sig))
  local missing = not_available(name)
  if missing then print(paint('33', wrap(missing, '  ', 96))) end
  print(wrap(e.doc, '  ', 96))
  if note then print(wrap(note, '  ', 96)) end
  if e.kernel then
    print('  options:')
    for _, o in ipairs(KSPEC[e.kernel] or {}) do
      local values = o.values and ("'" .. table.concat(o.values, "' | '") .. "'") or
          (o.kind == 'boolean' and 'true | false' or o.kind)
      print(wrap(o.key .. ' = ' .. values .. ' (default ' .. o.default .. '): ' .. o.doc, '    ', 96))
    end
    print('  counters in info.counters (for the default options; docs/trace.md defines each):')
    for _, c in ipairs(H.kernel_counters(e.kernel)) do print(wrap(c[1] .. ': ' .. c[2], '    ', 96)) end
  end
  local methods = {}
  for k in pairs(E) do
    if k:sub(1, #name + 1) == name .. ':' then methods[#methods + 1] = k end
  end
  table.sort(methods)
  if #methods > 0 then print('  methods:') end
  for _, k in ipairs(methods) do print('    ' .. E[k].sig) end
end

local function show_topic(name, paint)
  print(paint('1', name))
  local ok, module = H.available(name .. '.x')
  if name ~= 'lm' and name ~= 'Tensor' and name ~= 'F' and not ok and module and
      not name:find('.', 1, true) then
    print(paint('33', wrap("Not available yet: the '" .. module .. "' module is not built in this " ..
      'version of Lumen (it comes with a later issue). What API.md promises:', '  ', 96)))
  end
  print(wrap(H.topics[name], '  ', 96))
  local names = {}
  local prefix = name == 'Tensor' and '^Tensor[.:]' or ('^' .. name:gsub('%.', '%%.') .. '[.:]')
  for k in pairs(E) do
    if k:match(prefix) and not k:sub(#name + 2):find('[.:]') then names[#names + 1] = k end
  end
  table.sort(names)
  for _, k in ipairs(names) do print('  ' .. E[k].sig) end
  -- sub-topics
  for t in pairs(H.topics) do
    if t:match(prefix) then print('  ' .. t .. '  (:help ' .. t .. ')') end
  end
  -- what the live table holds beyond the entries: sub-tables (kernels.puzzles) and functions
  -- nothing documents, so that the list is the table's own
  local t = topic_table(name)
  if type(t) == 'table' and name ~= 'Tensor' then
    for _, k in ipairs(members(name, t, true)) do print('  ' .. member_line(name, k, field(t, k))) end
  end
end

--- :help ARG: the entry, a topic, the candidates of a bare name, or why there is none.
function H.show(arg, repl)
  local paint = repl and repl.paint or function(_, s) return s end
  local name = arg:gsub('^%s+', ''):gsub('%s+$', '')
  if name:match('^:') then
    for _, c in ipairs(repl and repl.commands or {}) do
      if ':' .. c[1] == name then
        print(paint('1;32', ':' .. c[1] .. (c[2] ~= '' and ' ' .. c[2] or '')))
        print(wrap(c[3], '  ', 96))
        return
      end
    end
    print("no REPL command '" .. name .. "'; :help lists them")
    return
  end
  local key, extra = H.lookup(name)
  if key and H.topics[key] and not E[key] then return show_topic(key, paint) end
  if key then return show_entry(key, type(extra) == 'string' and extra or nil, paint) end
  if type(extra) == 'table' then
    print("'" .. name .. "' is one of: " .. table.concat(extra, ', ') .. ' (:help one of them)')
    return
  end
  local v = resolve_global(name)
  if type(v) == 'table' then return show_table(name, v, paint) end
  if v ~= nil then
    print("no help for '" .. name .. "' (a " .. type(v) .. ' value); :help lists the topics')
    return
  end
  local near = H.suggest(name)
  if #near > 0 then
    print("no help for '" .. name .. "'; did you mean " .. paint('1', alternatives(near)) .. '?')
  else
    print("no help for '" .. name .. "'; :help lists the topics")
  end
end

return H
