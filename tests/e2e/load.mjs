// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Real llama.cpp (node-llama-cpp's prebuilt Vulkan build) for the gpuapi
// test: the Vulkan backend starts, then, once GO is written, the model is
// loaded onto the GPU, a context made and a prompt evaluated; llama.cpp's own
// log lines are written to OUT; the process then waits on HOLD.
//   node load.mjs MODEL READY GO OUT HOLD
import { readFileSync, writeFileSync } from "node:fs";
import { getLlama, LlamaLogLevel, LlamaCompletion } from "node-llama-cpp";

const [modelPath, ready, go, out, hold] = process.argv.slice(2);
const logs = [];
const llama = await getLlama({
	gpu: "vulkan",
	build: "never",
	logLevel: LlamaLogLevel.debug,
	logger: (level, message) => logs.push(message),
});
if (llama.gpu !== "vulkan") {
	console.error("no Vulkan device for llama.cpp: set GGML_VK_VISIBLE_DEVICES=0 for lavapipe");
	process.exit(1);
}
writeFileSync(ready, "ready\n");
readFileSync(go);
process.stderr.write("=== go\n"); // ggml's memory log lines after this are ours

const model = await llama.loadModel({ modelPath, gpuLayers: "max" });
const context = await model.createContext({ contextSize: 256, batchSize: 64 });
const completion = new LlamaCompletion({ contextSequence: context.getSequence() });
const text = await completion.generateCompletion("hello", { maxTokens: 4 });
process.stderr.write("=== done\n");
writeFileSync(out, JSON.stringify({ logs, generated: text.length }) + "\n");
readFileSync(hold);
await context.dispose();
await model.dispose();
await llama.dispose();
