"""PHP: definitions and symbols as Intelephense lists them, in a class file and in a template
that mixes HTML with PHP."""

from __future__ import annotations

from kenning.languages import language_for_path
from tests.chunking_helpers import check_invariants, chunk_at, chunked, spans, src, symbols_of

# In the shape of Monolog's and Symfony's classes: strict types, a namespace, uses, a doc
# comment and an attribute, constants, properties, a constructor and methods.
HANDLER = src(
    """
    <?php declare(strict_types=1);

    namespace Monolog\\Handler;

    use Monolog\\Level;
    use Monolog\\LogRecord;

    /**
     * Stores to any stream resource, rotating the file when it grows past a size.
     */
    #[\\AllowDynamicProperties]
    class StreamHandler extends AbstractProcessingHandler implements FlushableInterface
    {
        protected const MAX_CHUNK_SIZE = 2147483647, DEFAULT_CHUNK_SIZE = 10 * 1024 * 1024;
        protected int $streamChunkSize;
        private ?string $errorMessage = null, $dirCreated = null;

        public function __construct($stream, int|string|Level $level = Level::Debug)
        {
            parent::__construct($level);
            $this->streamChunkSize = self::DEFAULT_CHUNK_SIZE;
        }

        /** Writes the record down to the log, creating its directory first. */
        protected function write(LogRecord $record): void
        {
            if (!is_resource($this->stream)) {
                $this->createDir($this->url);
            }
            fwrite($this->stream, (string) $record->formatted);
        }
    }

    interface FlushableInterface { public function flush(): void; }
    trait ProcessableHandlerTrait { protected function processRecord(LogRecord $r): LogRecord { return $r; } }
    enum Level: int { case Debug = 100; case Info = 200; }
    function getallheaders(): array { return []; }
    const API_VERSION = 3;
    """
)

TEMPLATE = src(
    """
    <html>
    <body>
    <?php
    function render_row(array $row): string
    {
        return '<tr><td>' . htmlspecialchars($row['name']) . '</td></tr>';
    }
    ?>
    <table>
    <?php foreach ($rows as $row): ?>
      <?= render_row($row) ?>
    <?php endforeach; ?>
    </table>
    </body>
    </html>
    """
)


def test_php_definitions_are_symbols_of_their_types() -> None:
    assert language_for_path("src/Handler/StreamHandler.php") == "php"
    result = chunked(HANDLER, "php")
    assert symbols_of(result) == {
        ("Monolog\\Handler", "namespace", None),
        ("StreamHandler", "class", None),
        ("MAX_CHUNK_SIZE", "constant", "StreamHandler"),
        ("DEFAULT_CHUNK_SIZE", "constant", "StreamHandler"),
        ("$streamChunkSize", "property", "StreamHandler"),
        ("$errorMessage", "property", "StreamHandler"),
        ("$dirCreated", "property", "StreamHandler"),
        ("__construct", "constructor", "StreamHandler"),
        ("write", "method", "StreamHandler"),
        ("FlushableInterface", "interface", None),
        ("flush", "method", "FlushableInterface"),
        ("ProcessableHandlerTrait", "trait", None),
        ("processRecord", "method", "ProcessableHandlerTrait"),
        ("Level", "enum", None),
        ("Debug", "enum_member", "Level"),
        ("Info", "enum_member", "Level"),
        ("getallheaders", "function", None),
        ("API_VERSION", "constant", None),
    }
    # The opening tag, strict types, the namespace and the uses: boilerplate.
    assert spans(result)[0] == (1, 6, "imports", None)
    small = chunked(HANDLER, "php", max_chars=300)
    write = chunk_at(small, 25)
    assert (write.kind, write.symbol) == ("method", "StreamHandler.write")
    assert write.text.lstrip().startswith("/** Writes the record down to the log")


def test_a_template_mixing_html_and_php_keeps_its_markup_and_names_its_functions() -> None:
    result = chunked(TEMPLATE, "php")
    check_invariants(TEMPLATE, result, 800)
    assert symbols_of(result) == {("render_row", "function", None)}
    assert "<table>" in "\n".join(chunk.text for chunk in result.chunks)


def test_promoted_constructor_parameters_are_the_classs_properties() -> None:
    text = src(
        """
        <?php

        final class RotatingFileHandler
        {
            public function __construct(
                private readonly string $filename,
                protected int $maxFiles = 0,
                $level = 100,
            ) {
                $this->open($filename);
            }
        }
        """
    )
    assert symbols_of(chunked(text, "php")) == {
        ("RotatingFileHandler", "class", None),
        ("__construct", "constructor", "RotatingFileHandler"),
        # As Intelephense lists them; a plain parameter declares nothing.
        ("$filename", "property", "RotatingFileHandler"),
        ("$maxFiles", "property", "RotatingFileHandler"),
    }
