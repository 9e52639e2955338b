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

/** The knowledge base a document was exported from, if the user has it: the same one, or the only one of that name. */
export function exportedKnowledgeBase(document: unknown, knowledgeBases: readonly KnowledgeBase[]): KnowledgeBase | null {
  const named = (document as { knowledge_base?: { id?: unknown; name?: unknown } } | null)?.knowledge_base;
  if (!named || typeof named !== "object") return null;
  const same = knowledgeBases.find((base) => base.id === named.id);
  if (same) return same;
  const byName = knowledgeBases.filter((base) => base.name === named.name);
  return byName.length === 1 ? byName[0]! : null;
}

function exportedName(document: unknown): string | null {
  const name = (document as { knowledge_base?: { name?: unknown } } | null)?.knowledge_base?.name;
  return typeof name === "string" && name ? name : null;
}

/**
 * Create a pipeline from an exported JSON file. It goes over the knowledge base it was exported
 * from when the user has it (they may choose another); the dialog asks only otherwise. A file the
 * server refuses shows every reason.
 */
export function ImportPipelineDialog({ knowledgeBases, onClose }: { knowledgeBases: KnowledgeBase[]; onClose: () => void }) {
  const { t } = useTranslation();
  const toast = useToast();
  const navigate = useNavigate();
  const [document, setDocument] = useState<unknown>(undefined);
  const [knowledgeBase, setKnowledgeBase] = useState<number | null>(null);
  const [choosing, setChoosing] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const fileId = useId();
  const baseId = useId();
  const problemId = useId();
  const exported = document === undefined ? null : exportedKnowledgeBase(document, knowledgeBases);

  const choose = async (file: File | null) => {
    setProblem(null);
    setDocument(undefined);
    setChoosing(false);
    setKnowledgeBase(null);
    if (!file) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(await file.text());
    } catch {
      setProblem({ kind: "unreadable" });
      return;
    }
    setDocument(parsed);
    setKnowledgeBase(exportedKnowledgeBase(parsed, knowledgeBases)?.id ?? null);
  };

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    if (document === undefined || knowledgeBase === null) return;
    setProblem(null);
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

  const foreign = exported === null ? exportedName(document) : null;

  return (
    <Modal
      title={t("importPipeline.title")}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            {t("common.cancel")}
          </button>
          <button type="submit" form="import-pipeline" className="button button--primary" disabled={document === undefined || knowledgeBase === null || busy}>
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
            onChange={(event) => void choose(event.target.files?.[0] ?? null)}
            data-autofocus
          />
        </div>
        {document !== undefined && exported && !choosing ? (
          <div className="field" role="group" aria-labelledby={`${baseId}-label`}>
            <span id={`${baseId}-label`} className="field__label">
              {t("builder.knowledgeBase")}
            </span>
            <p>
              {t("importPipeline.keepsBase", { name: exported.name })}{" "}
              <button type="button" className="button button--small" onClick={() => setChoosing(true)}>
                {t("importPipeline.chooseAnother")}
              </button>
            </p>
          </div>
        ) : (
          document !== undefined && (
            <div className="field">
              <label htmlFor={baseId} className="field__label">
                {t("builder.knowledgeBase")}
              </label>
              <select id={baseId} className="input" value={knowledgeBase ?? ""} onChange={(event) => setKnowledgeBase(Number(event.target.value) || null)}>
                {knowledgeBase === null && <option value="">{t("importPipeline.chooseBase")}</option>}
                {knowledgeBases.map((base) => (
                  <option key={base.id} value={base.id}>
                    {base.name}
                  </option>
                ))}
              </select>
              {!exported && (
                <p className="form-field__hint">{foreign ? t("importPipeline.foreignBase", { name: foreign }) : t("importPipeline.noBase")}</p>
              )}
            </div>
          )
        )}
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
