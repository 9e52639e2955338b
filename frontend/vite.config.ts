import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// Django serves the build from static/frontend/ and reads .vite/manifest.json to emit the
// <script>/<link> tags, so there is no index.html: the entry is the TypeScript module itself.
export default defineConfig({
  plugins: [react()],
  base: "/static/frontend/",
  build: {
    outDir: "../static/frontend",
    emptyOutDir: true,
    manifest: true,
    // lucide's `icons` map (every icon, looked up by name at run time) is one large module.
    chunkSizeWarningLimit: 1500,
    rolldownOptions: {
      input: "src/main.tsx",
    },
  },
  test: {
    environment: "jsdom",
    setupFiles: ["src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
    // Above the async queries' 5 s (src/test/setup.ts), so a missing element reports itself.
    testTimeout: 20000,
  },
});
