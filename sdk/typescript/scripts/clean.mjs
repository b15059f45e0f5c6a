// Removes dist/ so that a file deleted from src/ never survives in a build.
import { rmSync } from "node:fs";
rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
