"""Vue, Svelte and Astro single-file components: their scripts read with the TypeScript or JavaScript
grammar, their markup and styles windowed where they stand."""

from __future__ import annotations

from kenning.chunking import DEFAULT_MAX_CHARS, chunk_source
from kenning.chunking.components import blank_outside, script_grammar, script_spans
from tests.chunking_helpers import check_invariants, spans, src, symbols_of

# In the shape of PrimeVue's components: the Options API, markup first.
VUE_OPTIONS = src(
    """
    <template>
        <nav :class="cx('root')">
            <button v-if="showFirst" @click="changePage(0)">«</button>
            <span class="p-paginator-current">{{ currentReport }}</span>
        </nav>
    </template>

    <script>
    import BasePaginator from './BasePaginator.vue';

    export default {
        name: 'Paginator',
        extends: BasePaginator,
        data() {
            return { d_first: this.first, d_rows: this.rows };
        },
        methods: {
            changePage(p) {
                const pc = this.pageCount;
                if (p >= 0 && p < pc) {
                    this.d_first = this.d_rows * p;
                }
            }
        }
    };
    </script>

    <style>
    .p-paginator { display: flex; }
    </style>
    """
)

# In the shape of VitePress's theme components: `<script setup lang="ts">` first.
VUE_SETUP = src(
    """
    <script setup lang="ts">
    import { computed } from 'vue'

    const props = defineProps<{ href?: string; noIcon?: boolean }>()

    export interface NavLink {
      text: string
      link: string
    }

    function isExternal(path: string): boolean {
      return /^(?:[a-z]+:|\\/\\/)/i.test(path)
    }

    const tag = computed(() => (props.href ? 'a' : 'span'))
    </script>

    <template>
      <component :is="tag" class="VPLink" :href="href">
        <slot />
      </component>
    </template>
    """
)

# In the shape of bits-ui's Svelte 5 components: a module script and an instance script.
SVELTE = src(
    """
    <script lang="ts" module>
    export type ToastPosition = 'top-left' | 'top-right';
    </script>

    <script lang="ts">
    import { onMount } from 'svelte';

    let { position = 'top-right', expand = false }: { position?: ToastPosition; expand?: boolean } = $props();

    function dismissAll(reason: string) {
      toasts.forEach((toast) => toast.dismiss(reason));
    }
    </script>

    <ol data-position={position}>
      {#each toasts as toast (toast.id)}
        <li>{toast.title}</li>
      {/each}
    </ol>
    """
)


def test_vue_options_api_methods_are_symbols_and_the_markup_is_windowed() -> None:
    result = chunk_source("paginator/Paginator.vue", VUE_OPTIONS, "vue")
    check_invariants(VUE_OPTIONS, result, DEFAULT_MAX_CHARS)
    assert {("data", "method", None), ("changePage", "method", None)} <= symbols_of(result)
    # The template (lines 1-6) is indexed as text where it stands, the style after the script.
    assert spans(result) == [
        (1, 13, "window", None),
        (14, 16, "method", "data"),
        (17, 23, "method", "changePage"),
        (24, 30, "window", None),
    ]
    assert "p-paginator-current" in result.chunks[0].text
    assert ".p-paginator { display: flex; }" in result.chunks[-1].text
    # Markup is never boilerplate, though the parser saw only blank lines there.
    assert [chunk.kind for chunk in result.chunks] == ["window", "method", "method", "window"]


def test_vue_script_setup_in_typescript() -> None:
    result = chunk_source("components/VPLink.vue", VUE_SETUP, "vue")
    check_invariants(VUE_SETUP, result, DEFAULT_MAX_CHARS)
    assert {
        ("NavLink", "interface", None),
        ("isExternal", "function", None),
    } <= symbols_of(result)
    function = next(chunk for chunk in result.chunks if chunk.symbol == "isExternal")
    assert function.text.startswith("function isExternal(path: string): boolean {")


def test_svelte_scripts_are_read_together_with_markup_between_them() -> None:
    result = chunk_source("lib/Toaster.svelte", SVELTE, "svelte")
    check_invariants(SVELTE, result, DEFAULT_MAX_CHARS)
    assert {("ToastPosition", "type", None), ("dismissAll", "function", None)} <= symbols_of(result)


# In the shape of Starlight's components: TypeScript frontmatter, markup, a client script.
ASTRO = src(
    """
    ---
    import Icon from '../user-components/Icon.astro';
    import type { Props } from '../props';

    const pagefindTranslations = {
      placeholder: Astro.locals.t('search.label'),
    };
    ---

    <site-search class={Astro.props.class}>
      <button data-open-modal aria-label={Astro.locals.t('search.label')}>
        <Icon name="magnifier" />
      </button>
    </site-search>

    <script>
      class SiteSearch extends HTMLElement {
        constructor() {
          super();
        }

        openModal(event?: MouseEvent) {
          this.dialog.showModal();
        }
      }
      customElements.define('site-search', SiteSearch);
    </script>
    """
)


def test_astro_frontmatter_and_scripts_are_typescript() -> None:
    result = chunk_source("components/Search.astro", ASTRO, "astro")
    check_invariants(ASTRO, result, DEFAULT_MAX_CHARS)
    assert {
        ("pagefindTranslations", "constant", None),
        ("SiteSearch", "class", None),
        ("openModal", "method", "SiteSearch"),
    } <= symbols_of(result)
    assert spans(result) == [(1, 16, "window", None), (17, 27, "class", "SiteSearch")]
    # A `---` further down is markup (a horizontal rule), not a second frontmatter.
    text = "<p>a</p>\n---\nconst x = 1\n---\n"
    assert script_spans(text.encode(), "astro") == []


# A page with scripts, as a demo or a template holds them: an external one, one of data, an
# inline one with a Jinja expression in it, and a module at the end of the body.
PAGE = src(
    """
    <!DOCTYPE html>
    <html>
    <head>
      <title>Upload</title>
      <script src="app.js"></script>
      <script type="application/ld+json">{"@type": "WebPage", "name": "function fake() {}"}</script>
      <script>
        // Send the chosen file to the server, retrying on a network error.
        function uploadWithRetry(file, attempts) {
          return fetch('{{ upload_url }}', { method: 'POST', body: file })
            .catch((e) => attempts > 0 ? uploadWithRetry(file, attempts - 1) : Promise.reject(e));
        }
      </script>
    </head>
    <body>
      <form><input type="file"></form>
      <script type="module">
        class Preview { show(file) { return file.name; } }
      </script>
    </body>
    </html>
    """
)


def test_an_html_pages_inline_scripts_are_parsed() -> None:
    result = chunk_source("templates/upload.html", PAGE, "html")
    check_invariants(PAGE, result, DEFAULT_MAX_CHARS)
    assert symbols_of(result) == {
        ("uploadWithRetry", "function", None),
        ("Preview", "class", None),
        ("show", "method", "Preview"),
    }
    function = next(chunk for chunk in result.chunks if chunk.symbol == "uploadWithRetry")
    assert function.text.startswith("    // Send the chosen file to the server")
    # The markup around is windowed where it stands, and is no boilerplate.
    assert "<title>Upload</title>" in result.chunks[0].text
    assert all(chunk.kind not in ("imports", "preamble") for chunk in result.chunks)


def test_a_component_without_an_inline_script_is_windowed() -> None:
    text = '<script src="./app.js"></script>\n<template>\n  <div>hello</div>\n</template>\n'
    result = chunk_source("App.vue", text, "vue")
    check_invariants(text, result, DEFAULT_MAX_CHARS)
    assert result.symbols == []
    assert [chunk.kind for chunk in result.chunks] == ["window"]


def test_script_spans_and_grammar() -> None:
    text = b'<script>a()</script><b/><SCRIPT lang="ts" setup>let x: T</SCRIPT ><script src="x.js"></script>'
    found = script_spans(text, "vue")
    assert [(text[start:end], grammar) for start, end, grammar in found] == [
        (b"a()", "javascript"),
        (b"let x: T", "typescript"),
    ]
    assert script_grammar(found) == "typescript"
    assert script_grammar([(0, 1, "javascript")]) == "javascript"
    assert script_grammar([(0, 1, "typescript"), (2, 3, "tsx")]) == "tsx"
    # Scripts of data or in another language are not read; `data-lang` is not `lang`.
    others = (
        b'<script type="application/ld+json">{"@context": "https://schema.org"}</script>'
        b'<script type="text/x-template" id="item"><li>{{ name }}</li></script>'
        b'<script lang="coffee">square = (x) -> x * x</script>'
        b'<script data-lang="coffee" type="module">run()</script>'
    )
    assert [grammar for _, _, grammar in script_spans(others, "astro")] == ["typescript"]
    # An opening tag without its closing one: no script, and nothing after it is searched.
    assert script_spans(b"<script>let a = 1;\n<template></template>", "vue") == []


def test_blank_outside_keeps_offsets_and_line_breaks() -> None:
    text = "<p>é</p>\r\n<script>\nlet ü = 1;\n</script>\n".encode()
    found = script_spans(text, "vue")
    blanked = blank_outside(text, found)
    assert len(blanked) == len(text)
    assert blanked.count(b"\n") == text.count(b"\n") and b"\r\n" in blanked
    start, end, _ = found[0]
    assert blanked[start:end] == text[start:end]
    assert blanked[:start].strip() == b""


def test_many_unclosed_script_tags_are_scanned_once() -> None:
    # Hostile files: 200,000 opening tags and no closing one, or no tag ever ended by `>`. A
    # lazy `<script>(.*?)</script>`, or attributes read up to the next `>`, would rescan the
    # rest of the file from each of them.
    for text in ("<script>\n" * 200_000, "<script \n" * 200_000):
        result = chunk_source("hostile.vue", text, "vue")
        assert result.symbols == []
