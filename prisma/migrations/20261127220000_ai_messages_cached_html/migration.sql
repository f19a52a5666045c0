-- An answer's contentHtml, rendered once when it is stored (by the worker, off the request path), as
-- GitLab keeps its Markdown fields' HTML (CacheMarkdownField: a *_html column and
-- cached_markdown_version). Web Duo Chat reads every message's contentHtml each time it opens a thread;
-- rendering 50 answers of 4 KB there took the API about 50 ms of CPU. A row whose version is not the
-- renderer's current one (older rows: null) is rendered when it is read, as before.
ALTER TABLE "ai_messages" ADD COLUMN "content_html" TEXT, ADD COLUMN "cached_markdown_version" INTEGER;
