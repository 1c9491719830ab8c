// node tools/ort_bench.js MODEL.onnx DIR SHAPE [RUNS] (tools/onnx_models_bench.sh runs it): writes a deterministic input
// DIR/input_0.pb of SHAPE (1x3x48x320), runs the model in onnxruntime-node at 1 and 2 threads, writes its outputs
// as DIR/output_<k>.pb and prints the warm ms per run.
const fs = require('fs');
const ort = require('onnxruntime-node');

function varint(n) {
  const out = [];
  let v = BigInt(n);
  while (v >= 0x80n) { out.push(Number(v & 0x7fn) | 0x80); v >>= 7n; }
  out.push(Number(v));
  return Buffer.from(out);
}
function field(tag, wire, payload) {
  const key = varint((tag << 3) | wire);
  if (wire === 0) return Buffer.concat([key, varint(payload)]);
  return Buffer.concat([key, varint(payload.length), payload]);
}
const ONNX_TYPE = { float32: 1, int64: 7, int32: 6 };
function tensorProto(name, t) {
  const parts = t.dims.map((d) => field(1, 0, d));
  parts.push(field(2, 0, ONNX_TYPE[t.type]));
  parts.push(field(8, 2, Buffer.from(name)));
  const d = t.data;
  parts.push(field(9, 2, Buffer.from(d.buffer, d.byteOffset, d.byteLength)));
  return Buffer.concat(parts);
}

(async () => {
  const [model, dir, shapeArg, runsArg] = process.argv.slice(2);
  const shape = shapeArg.split('x').map(Number);
  const runs = Number(runsArg || 10);
  const n = shape.reduce((a, b) => a * b, 1);
  const x = new Float32Array(n);
  for (let i = 0; i < n; ++i) x[i] = Math.sin(i * 0.001) * 0.5 + ((i * 7919) % 101) / 404;  // smooth plus texture
  fs.mkdirSync(dir, { recursive: true });
  let inputName;
  for (const threads of [1, 2]) {
    const s = await ort.InferenceSession.create(model, {
      intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
    inputName = s.inputNames[0];
    const feeds = { [inputName]: new ort.Tensor('float32', x, shape) };
    let out = await s.run(feeds);  // warm-up
    const t0 = process.hrtime.bigint();
    for (let r = 0; r < runs; ++r) out = await s.run(feeds);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6 / runs;
    console.log(`onnxruntime: ${threads} thread${threads > 1 ? 's' : ''}: ${ms.toFixed(3)} ms per run`);
    if (threads === 1)
      s.outputNames.forEach((name, k) => fs.writeFileSync(`${dir}/output_${k}.pb`, tensorProto(name, out[name])));
  }
  fs.writeFileSync(`${dir}/input_0.pb`, tensorProto(inputName, { dims: shape, type: 'float32', data: x }));
})();
