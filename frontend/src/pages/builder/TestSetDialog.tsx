import { Plus, Trash2 } from "lucide-react";
import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

import { fetchDatasets } from "../../api/evaluation";
import { fetchDocuments } from "../../api/knowledge";
import { saveTestSet, type GoldenQuestion, type TestSet } from "../../api/quality";
import { Field } from "../../components/fields";
import { SubmitDialog, useSubmission } from "../../components/SubmitDialog";
import { useLoad } from "../../lib/useLoad";

type Source = "dataset" | "questions";

interface TestSetDialogProps {
  pipelineId: number;
  knowledgeBaseId: number;
  initial: TestSet | null;
  onSaved: (testSet: TestSet) => void;
  onClose: () => void;
}

const EMPTY: GoldenQuestion = { question: "", documents: [] };

/** What the builder scores the tree on: an evaluation dataset over this knowledge base, or golden questions typed here. */
export function TestSetDialog({ pipelineId, knowledgeBaseId, initial, onSaved, onClose }: TestSetDialogProps) {
  const { t } = useTranslation();
  const ids = { source: useId(), dataset: useId(), question: useId() };
  const datasets = useLoad(fetchDatasets, []);
  const documents = useLoad((signal) => fetchDocuments(knowledgeBaseId, signal), [knowledgeBaseId]);
  const usable = datasets.state.status === "ready" ? datasets.state.data.filter((item) => item.knowledge_base === knowledgeBaseId) : [];
  const [source, setSource] = useState<Source>(initial && "dataset" in initial ? "dataset" : "questions");
  const [dataset, setDataset] = useState<number | null>(initial && "dataset" in initial ? initial.dataset : null);
  const [questions, setQuestions] = useState<GoldenQuestion[]>(initial && "questions" in initial ? initial.questions : [{ ...EMPTY }]);
  const submission = useSubmission(t("quality.saveFailed"));
  const messagesAt = (path: string) => submission.messagesAt(`test_set.${path}`);
  const placed = (path: string) => path === "test_set.dataset" || /^test_set\.questions\[\d+\]\.(question|documents)$/.test(path);
  const unplaced = submission.errors.filter((error) => !placed(error.path));
  const ready = source === "dataset" ? dataset !== null : questions.some((item) => item.question.trim() && item.documents.length);

  const change = (index: number, edit: Partial<GoldenQuestion>) =>
    setQuestions((current) => current.map((item, at) => (at === index ? { ...item, ...edit } : item)));

  const submit = () => {
    const testSet: TestSet = source === "dataset" ? { dataset: dataset! } : { questions };
    void submission.send(() => saveTestSet(pipelineId, testSet), (saved) => onSaved(saved.test_set));
  };

  const documentList = documents.state.status === "ready" ? documents.state.data.filter((item) => item.status === "ready") : [];
  return (
    <SubmitDialog
      title={t("quality.dialogTitle")}
      submitLabel={t("common.save")}
      ready={ready}
      busy={submission.busy}
      onSubmit={submit}
      onClose={onClose}
      uploaded={null}
      uploadLabel=""
      unplacedErrors={unplaced}
    >
      <fieldset className="choice-group">
        <legend className="field__label">{t("quality.source")}</legend>
        <label className="choice">
          <input type="radio" name={ids.source} checked={source === "questions"} onChange={() => setSource("questions")} />
          <span>{t("quality.sourceQuestions")}</span>
        </label>
        <label className="choice">
          <input type="radio" name={ids.source} checked={source === "dataset"} disabled={usable.length === 0} onChange={() => setSource("dataset")} />
          <span>{t("quality.sourceDataset")}</span>
        </label>
        {datasets.state.status === "ready" && usable.length === 0 && <p className="form-field__hint">{t("quality.noDataset")}</p>}
      </fieldset>

      {source === "dataset" && (
        <Field id={ids.dataset} label={t("quality.dataset")} errors={messagesAt("dataset")}>
          {(describedBy, invalid) => (
            <select id={ids.dataset} className="input" value={dataset ?? ""} aria-describedby={describedBy} aria-invalid={invalid || undefined}
              onChange={(event) => setDataset(event.target.value ? Number(event.target.value) : null)}>
              <option value="">{t("quality.chooseDataset")}</option>
              {usable.map((item) => (
                <option key={item.id} value={item.id}>
                  {t("quality.datasetOption", { name: item.name, count: item.query_count })}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}

      {source === "questions" && (
        <ol className="golden-list">
          {questions.map((item, index) => (
            <li key={index} className="golden">
              <Field id={`${ids.question}-${index}`} label={t("quality.question", { n: index + 1 })} errors={messagesAt(`questions[${index}].question`)}>
                {(describedBy, invalid) => (
                  <input id={`${ids.question}-${index}`} className="input" value={item.question} maxLength={2000}
                    aria-describedby={describedBy} aria-invalid={invalid || undefined}
                    onChange={(event) => change(index, { question: event.target.value })} />
                )}
              </Field>
              <Field id={`${ids.question}-${index}-documents`} label={t("quality.documents")} hint={t("quality.documentsHint")}
                errors={messagesAt(`questions[${index}].documents`)}>
                {(describedBy, invalid) => (
                  <select id={`${ids.question}-${index}-documents`} className="input golden__documents" multiple
                    value={item.documents.map(String)} aria-describedby={describedBy} aria-invalid={invalid || undefined}
                    onChange={(event) => change(index, { documents: [...event.target.selectedOptions].map((option) => Number(option.value)) })}>
                    {documentList.map((document) => (
                      <option key={document.id} value={document.id}>
                        {document.name}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              {questions.length > 1 && (
                <button type="button" className="button button--small" onClick={() => setQuestions((current) => current.filter((_, at) => at !== index))}>
                  <Trash2 aria-hidden="true" size={14} />
                  {t("quality.removeQuestion")}
                </button>
              )}
            </li>
          ))}
          <li>
            <button type="button" className="button button--small" onClick={() => setQuestions((current) => [...current, { ...EMPTY }])}>
              <Plus aria-hidden="true" size={14} />
              {t("quality.addQuestion")}
            </button>
          </li>
        </ol>
      )}
    </SubmitDialog>
  );
}
