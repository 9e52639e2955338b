import { CircleAlert, FileJson } from "lucide-react";
import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

import { pathErrorsOf, type PathError } from "../../api/components";
import type { KnowledgeBase } from "../../api/knowledge";
import { importPipeline } from "../../api/pipelines";
import { Modal } from "../../components/Modal";
import { parsePath, formatPath } from "../../components/RetrieverTree/paths";
import { useToast } from "../../components/Toasts";
import { useNavigate } from "../../router/Router";

type Problem = { kind: "unreadable" } | { kind: "invalid"; errors: PathError[] } | { kind: "failed"; message: string };

/** Where in the file a problem is: the server's path without its `document.` prefix. */
function inFile(path: string): string {
  const segments = parsePath(path);
  return formatPath(segments[0] === "document" ? segments.slice(1) : segments);
}

/** Create a pipeline from an exported JSON file; a file the server refuses shows every reason. */
export function ImportPipelineDialog({ knowledgeBases, onClose }: { knowledgeBases: KnowledgeBase[]; onClose: () => void }) {
  const { t } = useTranslation();
  const toast = useToast();
  const navigate = useNavigate();
  const [file, setFile] = useState<File | null>(null);
  const [knowledgeBase, setKnowledgeBase] = useState<number | null>(knowledgeBases[0]?.id ?? null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const fileId = useId();
  const baseId = useId();
  const problemId = useId();

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    if (!file || knowledgeBase === null) return;
    setProblem(null);
    let document: unknown;
    try {
      document = JSON.parse(await file.text());
    } catch {
      setProblem({ kind: "unreadable" });
      return;
    }
    setBusy(true);
    try {
      const pipeline = await importPipeline(knowledgeBase, document);
      toast.success(t("importPipeline.done", { name: pipeline.name }));
      navigate(`/pipelines/${pipeline.id}`);
    } catch (error) {
      const errors = pathErrorsOf(error);
      setProblem(errors?.length ? { kind: "invalid", errors } : { kind: "failed", message: (error as Error).message });
      setBusy(false);
    }
  };

  return (
    <Modal
      title={t("importPipeline.title")}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            {t("common.cancel")}
          </button>
          <button type="submit" form="import-pipeline" className="button button--primary" disabled={!file || knowledgeBase === null || busy}>
            <FileJson aria-hidden="true" size={16} />
            {t("importPipeline.submit")}
          </button>
        </>
      }
    >
      <form id="import-pipeline" className="stack" onSubmit={submit} aria-describedby={problem ? problemId : undefined}>
        <p className="muted">{t("importPipeline.intro")}</p>
        <div className="field">
          <label htmlFor={fileId} className="field__label">
            {t("importPipeline.file")}
          </label>
          <input
            id={fileId}
            className="input"
            type="file"
            accept="application/json,.json"
            onChange={(event) => {
              setFile(event.target.files?.[0] ?? null);
              setProblem(null);
            }}
            data-autofocus
          />
        </div>
        <div className="field">
          <label htmlFor={baseId} className="field__label">
            {t("builder.knowledgeBase")}
          </label>
          <select id={baseId} className="input" value={knowledgeBase ?? ""} onChange={(event) => setKnowledgeBase(Number(event.target.value) || null)}>
            {knowledgeBases.map((base) => (
              <option key={base.id} value={base.id}>
                {base.name}
              </option>
            ))}
          </select>
        </div>
        {problem && (
          <div id={problemId} role="alert" className="notice notice--error notice--compact">
            <CircleAlert aria-hidden="true" className="notice__icon" size={18} />
            <div>
              <p className="notice__title">
                {problem.kind === "unreadable" ? t("importPipeline.unreadable") : t("importPipeline.refused")}
              </p>
              {problem.kind === "invalid" && (
                <ul className="error-paths">
                  {problem.errors.map((error) => (
                    <li key={error.path + error.message}>
                      {error.path && <code>{inFile(error.path)}</code>} {error.message}
                    </li>
                  ))}
                </ul>
              )}
              {problem.kind === "failed" && <p className="notice__detail">{problem.message}</p>}
            </div>
          </div>
        )}
      </form>
    </Modal>
  );
}
