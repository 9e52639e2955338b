import "@testing-library/jest-dom/vitest";
import { cleanup } from "@testing-library/react";
import { afterEach, beforeEach } from "vitest";

import i18n from "../i18n";

beforeEach(async () => {
  window.localStorage.clear();
  await i18n.changeLanguage("en");
});

// Without vitest globals, Testing Library cannot register its own automatic cleanup.
afterEach(() => {
  cleanup();
});
