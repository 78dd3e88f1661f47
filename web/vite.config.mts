import path from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// `npm run build` (scripts/build.js) runs this after tsc: the app into dist/dashboard, served
// by the service at /dashboard.
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: path.resolve(import.meta.dirname, '..', 'dist', 'dashboard'),
    emptyOutDir: true,
    sourcemap: false,
  },
  server: { proxy: { '/trpc': 'http://localhost:3000' } },
});
