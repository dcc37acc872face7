// The independent oracle: TFLite itself (compiled to WebAssembly, from the
// npm package @tensorflow/tfjs-tflite), run with Node on the same
// observations as our evaluator.
//   node tflite_oracle.js WASM_DIR MODEL.tflite OBSERVATIONS.jsonl [--bench]
// Each observation line maps feature names to numbers or arrays; a model
// input `action_<feature>:0` (or `action_<feature>`) takes that feature, or
// zeros; "inf", "-inf" and "nan" stand for the values JSON cannot hold. Prints one JSON line per observation: {"outputs": {tensor: [values]}};
// with --bench, only the mean CPU microseconds per evaluation (inputs filled
// and outputs read each time) over at least one CPU second.
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  const [wasmDir, modelPath, observationsPath, mode] = process.argv.slice(2);
  const factory = require(path.join(wasmDir, 'tflite_web_api_cc.js'));
  const module = await factory({
    wasmBinary: fs.readFileSync(path.join(wasmDir, 'tflite_web_api_cc.wasm')),
    locateFile: (file) => path.join(wasmDir, file),
    print: () => {},
    printErr: (text) => process.stderr.write(text + '\n'),
  });
  const model = fs.readFileSync(modelPath);
  const ptr = module._malloc(model.length);
  module.HEAPU8.set(model, ptr);
  const runner = module.TFLiteWebModelRunner.CreateFromBufferAndOptions(
      ptr, model.length, {numThreads: 1, enableProfiling: false, maxProfilingBufferEntries: 1024});
  if (!runner.ok()) throw new Error('TFLite refused ' + modelPath + ': ' + runner.errorMessage());
  const r = runner.value();
  const inputs = r.GetInputs(), outputs = r.GetOutputs();
  const list = (v) => Array.from({length: v.size()}, (_, i) => v.get(i));
  const ins = list(inputs), outs = list(outputs);
  const featureOf = (name) => name.replace(/:0$/, '').replace(/^action_/, '');
  const special = {'inf': Infinity, '-inf': -Infinity, 'nan': NaN};
  const number = (v) => (typeof v === 'string' && v in special ? special[v] : v);
  const lines = fs.readFileSync(observationsPath, 'utf8').split('\n').filter((l) => l.trim());
  const parsed = lines.map((l) => JSON.parse(l));
  if (mode === '--bench') {
    const bound = ins.map((t) => [t, t.data(), featureOf(t.name)]);
    const outData = outs.map((t) => t.data());
    let count = 0, sink = 0;
    const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
    const start = cpu();  // CPU time: a loaded machine must not inflate the figure
    let seconds = 0;
    while (seconds < 1.0) {
      for (const obs of parsed) {
        for (const [t, data, feature] of bound) {
          const value = obs[feature];
          if (value === undefined) data.fill(0);
          else if (Array.isArray(value)) data.set(value.map(number));
          else data[0] = number(value);
        }
        if (!r.Infer()) throw new Error('Infer failed');
        sink += outData[0][0];
        ++count;
      }
      seconds = cpu() - start;
    }
    process.stdout.write(JSON.stringify({decisions: count, seconds, us_per_decision: seconds * 1e6 / count, sink}) + '\n');
    return;
  }
  const out = [];
  for (const obs of parsed) {
    for (const t of ins) {
      const data = t.data();
      const value = obs[featureOf(t.name)];
      if (value === undefined) {
        data.fill(0);
        continue;
      }
      const values = Array.isArray(value) ? value : [value];
      if (values.length !== data.length)
        throw new Error(`${t.name}: ${values.length} values for ${data.length} elements`);
      for (let i = 0; i < values.length; ++i) data[i] = number(values[i]);
    }
    if (!r.Infer()) throw new Error('Infer failed');
    const result = {};
    for (const t of outs) result[t.name] = Array.from(t.data()).map(Number);
    out.push(JSON.stringify({outputs: result}));
  }
  process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
}

main().catch((e) => {
  process.stderr.write('tflite_oracle: ' + (e.stack || e) + '\n');
  process.exit(1);
});
