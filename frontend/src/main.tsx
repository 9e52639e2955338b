import { StrictMode } from "react";
import { createRoot } from "react-dom/client";

import "./i18n";
import "./styles/index.css";
import { App } from "./App";

const container = document.getElementById("root");
if (!container) {
  throw new Error('Trellis: the page has no <div id="root"> to mount into.');
}

createRoot(container).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
